"""A grant is bounded: a value with extra digits is refused (it would overflow
the 64-bit micro-dollar columns), with a clear error, and nothing is written."""

import pytest
from django.urls import reverse

from credits.models import CreditAccount, LedgerEntry
from credits.money import micros_from_credits
from credits.services import MAX_GRANT_CREDITS, credits_grant

pytestmark = pytest.mark.django_db

GRANT_URL = reverse("admin:credits_creditaccount_grant")


def test_the_largest_grant_is_accepted(root, acme):
    entry = credits_grant(organization=acme, credits=MAX_GRANT_CREDITS, staff_user=root, reason="Enterprise deal")

    assert entry.granted_delta == micros_from_credits(MAX_GRANT_CREDITS) == 100_000_000_000


@pytest.mark.parametrize("credits", [MAX_GRANT_CREDITS + 1, 10**19, 10**30])
def test_a_grant_above_the_bound_is_refused_and_writes_nothing(root, acme, credits):
    with pytest.raises(ValueError, match="A grant is at most 10,000,000 credits"):
        credits_grant(organization=acme, credits=credits, staff_user=root, reason="Typo")

    assert not LedgerEntry.objects.exists() and not CreditAccount.objects.exists()


@pytest.mark.parametrize("credits", [MAX_GRANT_CREDITS + 1, "9" * 25])
def test_the_grant_form_refuses_a_huge_value_with_an_error(root_client, acme, credits):
    response = root_client.post(GRANT_URL, {"organization": acme.pk, "credits": credits, "reason": "Typo"})

    assert response.status_code == 200
    assert response.context["form"].errors == {
        "credits": ["Ensure this value is less than or equal to 10000000."]
    }
    assert not LedgerEntry.objects.filter(kind="grant").exists()


def test_the_grant_form_names_the_bound(root_client):
    assert "at most 10,000,000 per grant" in root_client.get(GRANT_URL).content.decode()


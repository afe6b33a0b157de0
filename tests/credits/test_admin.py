"""Admin: accounts and ledger read-only; staff grant credits with a reason."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from credits.models import CreditAccount, LedgerEntry
from credits.money import micros_from_credits
from credits.services import credits_reserve
from tests.credits.support import new_turn

pytestmark = pytest.mark.django_db

GRANT_URL = reverse("admin:credits_creditaccount_grant")


@pytest.fixture
def admin_client(staff) -> Client:
    client = Client()
    client.force_login(staff)
    return client


@pytest.fixture
def entry(owner) -> LedgerEntry:
    credits_reserve(owner.member, turn_id=new_turn())
    return LedgerEntry.objects.get(kind="reserve")


def test_staff_grant_writes_a_ledger_row_naming_them(admin_client, staff, acme, entry):
    response = admin_client.post(
        GRANT_URL, {"organization": acme.pk, "credits": 250, "reason": "Pilot extension"}
    )

    grant = LedgerEntry.objects.get(kind="grant")
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:credits_creditaccount_change", args=[grant.account_id])
    assert (grant.actor, grant.reason, grant.granted_delta) == (
        staff,
        "Pilot extension",
        micros_from_credits(250),
    )
    assert grant.account.granted_micros == micros_from_credits(1250)


def test_the_grant_form_is_shown_and_linked_from_the_account_list(admin_client, entry):
    assert admin_client.get(GRANT_URL).status_code == 200
    assert GRANT_URL in admin_client.get(reverse("admin:credits_creditaccount_changelist")).content.decode()


@pytest.mark.parametrize(
    "data",
    [{"credits": 0, "reason": "zero"}, {"credits": 10, "reason": ""}, {"credits": "ten", "reason": "typo"}],
    ids=["zero-credits", "no-reason", "not-a-number"],
)
def test_an_invalid_grant_form_grants_nothing(admin_client, acme, data):
    response = admin_client.post(GRANT_URL, {"organization": acme.pk, **data})

    assert response.status_code == 200
    assert not LedgerEntry.objects.filter(kind="grant").exists()


def test_staff_without_the_grant_permission_are_refused(acme):
    clerk = get_user_model().objects.create_user(username="clerk", password="pw", is_staff=True)
    clerk.user_permissions.add(Permission.objects.get(codename="view_creditaccount"))
    client = Client()
    client.force_login(clerk)

    response = client.post(GRANT_URL, {"organization": acme.pk, "credits": 5, "reason": "x"})

    assert response.status_code == 403
    assert not LedgerEntry.objects.exists()
    assert client.get(reverse("admin:credits_creditaccount_changelist")).status_code == 200


def test_a_person_who_is_not_staff_is_sent_to_the_admin_login(owner, acme):
    client = Client()
    client.force_login(owner.user)

    response = client.post(GRANT_URL, {"organization": acme.pk, "credits": 5, "reason": "x"})

    assert response.status_code == 302 and "/login/" in response["Location"]
    assert not LedgerEntry.objects.exists()


@pytest.mark.parametrize("model", ["creditaccount", "ledgerentry"])
def test_lists_and_details_are_readable(admin_client, entry, model):
    obj = entry.account if model == "creditaccount" else entry

    assert admin_client.get(reverse(f"admin:credits_{model}_changelist")).status_code == 200
    detail = admin_client.get(reverse(f"admin:credits_{model}_change", args=[obj.pk]))
    assert detail.status_code == 200
    assert 'name="_save"' not in detail.content.decode()


@pytest.mark.parametrize("model", ["creditaccount", "ledgerentry"])
def test_accounts_and_ledger_cannot_be_added_changed_or_deleted(admin_client, entry, model):
    obj = entry.account if model == "creditaccount" else entry
    before = (CreditAccount.objects.get().reserved_micros, LedgerEntry.objects.count())

    add = admin_client.post(reverse(f"admin:credits_{model}_add"), {})
    change = admin_client.post(
        reverse(f"admin:credits_{model}_change", args=[obj.pk]), {"reserved_micros": 0}
    )
    delete = admin_client.post(reverse(f"admin:credits_{model}_delete", args=[obj.pk]), {"post": "yes"})
    bulk = admin_client.post(
        reverse(f"admin:credits_{model}_changelist"),
        {"action": "delete_selected", "_selected_action": [obj.pk]},
    )

    assert (add.status_code, change.status_code, delete.status_code) == (403, 403, 403)
    assert bulk.status_code in (200, 302)
    assert (CreditAccount.objects.get().reserved_micros, LedgerEntry.objects.count()) == before


def test_an_account_page_links_to_its_ledger(admin_client, entry, staff, acme):
    account_page = admin_client.get(reverse("admin:credits_creditaccount_change", args=[entry.account_id]))
    ledger_url = reverse("admin:credits_ledgerentry_changelist") + f"?account={entry.account_id}"

    assert ledger_url in account_page.content.decode()
    assert "2 entries" in account_page.content.decode()
    ledger = admin_client.get(ledger_url)
    assert ledger.status_code == 200
    assert ledger.context["cl"].result_count == 2

"""GET /api/credits, tried by the whole cast."""

import pytest

from credits.models import CreditAccount
from credits.services import credits_reserve, credits_settle
from tests.conftest import token_just_used
from tests.credits.support import new_turn

pytestmark = pytest.mark.django_db

URL = "/api/credits"


@pytest.fixture
def spent(owner):
    """Acme this month: one turn settled at 12,345 micros, one reserved."""
    settled = new_turn()
    credits_reserve(owner.member, turn_id=settled)
    credits_settle(turn_id=settled, cost_micros=12_345)
    credits_reserve(owner.member, turn_id=new_turn())


ACME_AFTER_SPENDING = {
    "monthlyCredits": 1000,
    "grantedCredits": 1000,
    "usedCredits": 1,
    "reservedCredits": 3,
    "remainingCredits": 995,
    "grantedMicros": 10_000_000,
    "usedMicros": 12_345,
    "reservedMicros": 30_000,
    "remainingMicros": 9_957_655,
    "person": None,  # no cap: the organization's credits are the person's to use
}


def test_owner_sees_the_organizations_month(owner, spent, django_assert_max_num_queries):
    token_just_used(owner)
    with django_assert_max_num_queries(3):
        response = owner.client.get(URL)

    assert response.status_code == 200
    body = response.json()
    assert len(body.pop("month")) == 7
    assert body.pop("runOutOn") is None  # a member's view: the forecast is the admins' (test_forecast.py)
    assert body == ACME_AFTER_SPENDING


def test_a_person_under_a_cap_sees_what_is_left_of_it(owner, colleague, spent):
    """The owner's turns used 1.23 and hold 3 credits of their 25: 20 are theirs
    to spend; the colleague's own cap of 500 is bounded by what Acme has left."""
    from assistant_engine.organizations.models import Membership

    Membership.objects.filter(user=owner.user).update(monthly_cap_credits=25)
    Membership.objects.filter(user=colleague.user).update(monthly_cap_credits=5000)
    owners, colleagues = owner.client.get(URL).json()["person"], colleague.client.get(URL).json()["person"]
    owners.pop("runOutOn")  # depends on the day of the month: tests/credits/test_forecast.py
    assert owners == {"capCredits": 25, "spentCredits": 4, "remainingCredits": 20}
    assert colleagues == {"capCredits": 5000, "spentCredits": 0, "remainingCredits": 995, "runOutOn": None}


def test_colleague_sees_the_same_organization_account(colleague, spent):
    response = colleague.client.get(URL)

    assert response.status_code == 200
    assert response.json()["remainingMicros"] == ACME_AFTER_SPENDING["remainingMicros"]


def test_outsider_sees_only_their_own_organization(outsider, spent):
    response = outsider.client.get(URL)

    assert response.status_code == 200
    assert response.json()["remainingMicros"] == response.json()["grantedMicros"] == 10_000_000
    assert response.json()["usedMicros"] == response.json()["reservedMicros"] == 0


def test_outsider_cannot_name_another_organization(outsider, spent):
    response = outsider.client.get(URL, HTTP_X_ORGANIZATION="acme")

    assert response.status_code == 404
    assert response.json()["code"] == "organization_not_found"


def test_anonymous_gets_401(anonymous, spent):
    response = anonymous.get(URL)

    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


def test_reading_credits_does_not_open_the_month(owner):
    response = owner.client.get(URL)

    assert response.json()["remainingCredits"] == 1000
    assert not CreditAccount.objects.exists()


def test_credits_are_read_only(owner):
    assert owner.client.post(URL, {}, format="json").status_code == 405

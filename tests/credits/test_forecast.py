"""The day the credits run out at the month's pace (issue 35.2): computed by
hand for a seeded pace, and shown to whom it concerns."""

from datetime import UTC, date, datetime

import pytest
from django.utils import timezone

from assistant_engine.organizations.models import Membership
from credits.forecast import run_out_day
from credits.models import CreditAccount, MemberMonthUsage
from credits.money import current_month, micros_from_credits
from credits.services import credits_reserve, credits_settle
from tests.conftest import make_person
from tests.credits.support import new_turn

URL = "/api/credits"
DECEMBER = "2026-12"


def test_the_day_is_the_one_computed_by_hand():
    # 10 days into December, 4,000 of 10,000 credits spent: 400 a day, the other 6,000 last 15 days.
    tenth = datetime(2026, 12, 11, tzinfo=UTC)
    assert run_out_day(spent_micros=micros_from_credits(4000), limit_micros=micros_from_credits(10_000),
                       month=DECEMBER, now=tenth) == date(2026, 12, 26)
    # Half a day into the 1st, 1 of 100 spent: the rest lasts 49.5 days, past the month.
    assert run_out_day(spent_micros=micros_from_credits(1), limit_micros=micros_from_credits(100),
                       month=DECEMBER, now=datetime(2026, 12, 1, 12, tzinfo=UTC)) is None


@pytest.mark.parametrize(("spent", "expected"), [
    (0, None),  # no pace yet
    (10_000, date(2026, 12, 11)),  # nothing left: today
    (5_000, date(2026, 12, 21)),  # half in 10 days: the other half in 10 more
    (3_000, None),  # 23.3 more days: 3 January, not this month
])
def test_the_edges_of_the_month(spent, expected):
    tenth = datetime(2026, 12, 11, tzinfo=UTC)
    assert run_out_day(spent_micros=micros_from_credits(spent), limit_micros=micros_from_credits(10_000),
                       month=DECEMBER, now=tenth) == expected


@pytest.fixture
def spent_it_all(owner):
    """Acme's month with a turn settled, then its totals set to the whole grant
    (the ledger never overdraws; what is forecast is the totals)."""
    turn = new_turn()
    credits_reserve(owner.member, turn_id=turn)
    credits_settle(turn_id=turn, cost_micros=1000)
    CreditAccount.objects.filter(organization=owner.organization, month=current_month(timezone.now())).update(
        used_micros=micros_from_credits(1000))


@pytest.mark.django_db
def test_admins_read_the_organizations_day_and_members_do_not(acme, owner, spent_it_all):
    admin = make_person("ada", acme, role=Membership.Role.ADMIN)
    today = timezone.now().astimezone(UTC).date().isoformat()

    assert admin.client.get(URL).json()["runOutOn"] == today
    assert owner.client.get(URL).json()["runOutOn"] is None


@pytest.mark.django_db
def test_a_person_at_their_cap_reads_their_own_day(owner, colleague, spent_it_all):
    Membership.objects.filter(user__in=[owner.user, colleague.user]).update(monthly_cap_credits=1)
    MemberMonthUsage.objects.filter(user=owner.user).update(used_micros=micros_from_credits(1))
    today = timezone.now().astimezone(UTC).date().isoformat()

    assert owner.client.get(URL).json()["person"]["runOutOn"] == today
    assert colleague.client.get(URL).json()["person"]["runOutOn"] is None  # nothing spent: no pace


@pytest.mark.django_db
def test_the_organization_page_and_the_pill_say_the_day(acme, owner, spent_it_all, django_assert_num_queries):
    from django.utils.formats import date_format

    from tests.web.conftest import web_client

    admin = web_client(make_person("ada", acme, role=Membership.Role.ADMIN))
    Membership.objects.filter(user=owner.user).update(monthly_cap_credits=1)
    MemberMonthUsage.objects.filter(user=owner.user).update(used_micros=micros_from_credits(1))
    today = date_format(timezone.now().astimezone(UTC).date(), "DATE_FORMAT")
    admin.get("/organization/")  # the session's organization is stored on the first visit

    # As before the forecast, with the spend section's two (tests/web/test_organization_page.py).
    with django_assert_num_queries(13):
        page = admin.get("/organization/").content.decode()
    pill = web_client(owner).get("/").content.decode()

    assert f"At this pace they run out on {today} (UTC)." in page
    assert f"At your pace, your cap is reached on {today}." in pill


@pytest.mark.django_db
def test_a_month_at_an_easy_pace_lasts(acme, owner):
    from tests.web.conftest import web_client

    turn = new_turn()
    credits_reserve(owner.member, turn_id=turn)
    credits_settle(turn_id=turn, cost_micros=1)
    admin = web_client(make_person("ada", acme, role=Membership.Role.ADMIN))

    assert "At this pace they last the month." in admin.get("/organization/").content.decode()

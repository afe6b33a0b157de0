"""Alerts before the credits run out (issue 35.3): crossing 80 % and 100 % of
the month's credits e-mails the organization's admins, in their language, once
per threshold and month, even when several turns cross it at the same moment."""

import pytest
from django.contrib.auth import get_user_model
from django.core import mail

from assistant_engine.organizations.models import Membership, PersonPreferences
from credits.models import CreditAlert
from credits.services import credits_grant, credits_reserve, credits_settle
from tests.conftest import make_person
from tests.credits.support import MID_MARCH, new_turn, race

# Acme's 1000 credits a month: 10,000,000 micros.
JUST_BELOW_80 = 7_990_000


def spend(member, micros: int, *, now=MID_MARCH) -> None:
    turn = new_turn()
    credits_reserve(member, turn_id=turn, now=now)
    credits_settle(turn_id=turn, cost_micros=micros)


@pytest.fixture
def admins(acme):
    """Two admins with addresses (one reading German), a suspended one, and the members (no e-mail to them)."""
    ada = make_person("ada", acme, role=Membership.Role.ADMIN)
    bert = make_person("bert", acme, role=Membership.Role.ADMIN)
    gone = make_person("gone", acme, role=Membership.Role.ADMIN)
    for person, address in ((ada, "ada@acme.example"), (bert, "bert@acme.example"), (gone, "gone@acme.example")):
        person.user.email = address
        person.user.save(update_fields=["email"])
    PersonPreferences.objects.create(user=bert.user, language="de")
    Membership.objects.filter(user=gone.user).update(suspended_at=MID_MARCH)
    return ada, bert


@pytest.mark.django_db(transaction=True)
def test_crossing_80_percent_emails_each_admin_once_in_their_language(owner, admins):
    owner.user.email = "olivia@acme.example"
    owner.user.save(update_fields=["email"])
    spend(owner.member, JUST_BELOW_80)
    assert mail.outbox == []  # 79.9 %: nothing yet

    spend(owner.member, 20_000)  # 80.1 %: 1,990,000 micros (199 credits) left, told now
    spend(owner.member, 20_000)  # still past 80, not yet 100

    by_address = {message.to[0]: message for message in mail.outbox}
    assert sorted(by_address) == ["ada@acme.example", "bert@acme.example"]  # not the members, not the suspended
    assert by_address["ada@acme.example"].subject == "Acme has used 80 % of its credits for 2026-03"
    assert by_address["bert@acme.example"].subject == "Acme hat 80 % seiner Credits für 2026-03 verbraucht"
    assert "Credits left this month: 199." in by_address["ada@acme.example"].body
    assert list(CreditAlert.objects.values_list("percent", "emailed")) == [(80, 2)]


@pytest.mark.django_db(transaction=True)
def test_one_turn_crossing_both_thresholds_tells_both_and_a_grant_does_not_tell_again(owner, acme, admins):
    spend(owner.member, 10_000_000)  # 0 → 100 % at once
    assert sorted(CreditAlert.objects.values_list("percent", flat=True)) == [80, 100]
    assert len(mail.outbox) == 4

    staff = get_user_model().objects.create_superuser("root", "root@example.com", "pw-root")
    credits_grant(organization=acme, credits=1000, staff_user=staff, reason="more for March", now=MID_MARCH)
    spend(owner.member, 9_000_000)  # past 80 % again in the same month
    assert len(mail.outbox) == 4  # once per threshold and month


@pytest.mark.django_db(transaction=True)
def test_eight_turns_crossing_80_percent_at_once_send_one_email_per_admin(owner, admins):
    spend(owner.member, JUST_BELOW_80)
    turns = [new_turn() for _ in range(8)]
    for turn in turns:
        credits_reserve(owner.member, turn_id=turn, now=MID_MARCH)

    outcomes = race(8, lambda index: credits_settle(turn_id=turns[index], cost_micros=20_000))

    assert outcomes == [True] * 8
    assert sorted(message.to[0] for message in mail.outbox) == ["ada@acme.example", "bert@acme.example"]
    assert CreditAlert.objects.count() == 1


@pytest.mark.django_db
def test_the_admins_pages_say_it_while_it_lasts_and_members_pages_do_not(acme, owner, admins):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.web.conftest import web_client

    ada, _ = admins
    admin_web, member_web = web_client(ada), web_client(owner)
    spend(owner.member, 10_000, now=None)  # the month is open: its summary is one query
    admin_web.get("/data/")  # the session's organization is stored on the first visit
    with CaptureQueriesContext(connection) as before_queries:
        before = admin_web.get("/data/").content.decode()
    spend(owner.member, 8_500_000, now=None)  # 85 % of this month's

    with CaptureQueriesContext(connection) as after_queries:
        after = admin_web.get("/data/").content.decode()
    assert "data-credits-alert" not in before and "data-credits-alert" in after
    assert "Your organization has used 80 % of its credits for" in after
    assert len(after_queries) == len(before_queries)  # the notice reads the totals the top bar read
    assert "data-credits-alert" not in member_web.get("/data/").content.decode()
    chat = admin_web.get("/").content.decode()  # the chat page has no room above: the pill says it
    assert "pill--alert" in chat and "Your organization has used 80 % of its credits for" in chat


@pytest.mark.django_db(transaction=True)
def test_a_person_crossing_80_percent_of_their_cap_is_told_to_the_admins_once(owner, colleague, admins):
    Membership.objects.filter(user__in=[owner.user, colleague.user]).update(monthly_cap_credits=10)
    spend(owner.member, 50_000)  # 3 held then 5 used: 50 %
    assert mail.outbox == []

    spend(owner.member, 30_000)  # its hold of 3 takes the spending from 5 to 8 of 10: 80 %
    Membership.objects.filter(user=owner.user).update(monthly_cap_credits=20)
    spend(owner.member, 20_000)  # 8 → 10 of 20 (50 %), then past 80 % of a cap of 13 again: told once a month
    Membership.objects.filter(user=owner.user).update(monthly_cap_credits=13)
    spend(owner.member, 0)
    spend(colleague.member, 10_000)  # a colleague's own 10 %: nothing

    subjects = sorted((message.to[0], message.subject) for message in mail.outbox)
    assert subjects == [("ada@acme.example", "olivia has used 80 % of their monthly cap in Acme"),
                        ("bert@acme.example", "olivia hat 80 % des monatlichen Limits in Acme verbraucht")]
    assert "monthly cap of 10 credits" in next(m.body for m in mail.outbox if m.to == ["ada@acme.example"])
    assert list(CreditAlert.objects.values_list("user__username", "percent")) == [("olivia", 80)]


@pytest.mark.django_db(transaction=True)
def test_an_organizations_own_thresholds_are_the_ones_told(owner, acme, admins):
    """Issue 35.3: the admins set the thresholds; the deployment's (80, 100) no longer apply to them."""
    ada, _ = admins
    from assistant_engine.organizations.services import credit_alert_percents_set

    credit_alert_percents_set(ada.member, text="50, 90")
    spend(owner.member, 4_990_000)
    assert mail.outbox == []
    spend(owner.member, 20_000)  # 50.1 %
    spend(owner.member, 3_000_000)  # 80.1 %: not one of theirs
    assert sorted(CreditAlert.objects.values_list("percent", flat=True)) == [50]
    assert {message.subject for message in mail.outbox} == {"Acme has used 50 % of its credits for 2026-03",
                                                            "Acme hat 50 % seiner Credits für 2026-03 verbraucht"}
    spend(owner.member, 1_000_000)  # 90.1 %
    assert sorted(CreditAlert.objects.values_list("percent", flat=True)) == [50, 90] and len(mail.outbox) == 4


@pytest.mark.django_db(transaction=True)
def test_a_staff_grant_is_in_the_organizations_change_log(acme):
    from assistant_engine.organizations.models import OrganizationChange
    from assistant_engine.web.changes import change_sentence

    staff = get_user_model().objects.create_superuser("root", "root@example.com", "pw-root")
    credits_grant(organization=acme, credits=250, staff_user=staff, reason="a busy March", now=MID_MARCH)
    [change] = OrganizationChange.objects.filter(organization=acme)
    assert (change.action, change.actor_username) == ("credits_granted", "root")
    assert change_sentence(change) == "root (staff) granted 250 credits this month (reason: a busy March)"


@pytest.mark.django_db
def test_the_admins_notice_follows_the_organizations_thresholds(acme, owner, admins):
    from tests.web.conftest import web_client

    ada, _ = admins
    acme.credit_alert_percents = "50"
    acme.save(update_fields=["credit_alert_percents"])
    spend(owner.member, 5_500_000, now=None)  # 55 % of this month's
    page = web_client(ada).get("/data/").content.decode()
    assert "Your organization has used 50 % of its credits for" in page

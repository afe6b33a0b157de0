"""Per-person monthly caps: at submission (402 member_cap_reached, a message
apart from the organization's credits_exhausted), in the per-call holds of a
running turn, under a race of one person's concurrent submissions, and the
operators' `set_member_cap`."""

import io

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from assistant.chat import chat_submit
from assistant.loop import run_turn
from assistant.models import Turn
from assistant.turn.outcome import CAP_NOTICE
from assistant_engine.organizations.members import resolve_member
from assistant_engine.organizations.models import Membership, Organization, OrganizationChange
from assistant_engine.providers.clients.base import Usage
from conversations.models import Message, Thread
from credits.models import CreditAccount, LedgerEntry
from credits.money import micros_from_credits
from credits.selectors import credits_audit_mismatches
from credits.services import MemberCapReached, member_spent_micros
from tests.assistant.conftest import PRICED_OPTION, Clock, play
from tests.conftest import make_person
from tests.fakes.scripted import ScriptedClient, call
from tests.races import race

RESERVATION_CREDITS = 3
SEARCH = ("search_notes", {"query": "budget"})


def set_cap(person, credits):
    Membership.objects.filter(user=person.user, organization=person.organization).update(monthly_cap_credits=credits)


def chat(person, message="Hello"):
    return person.client.post("/api/chat", {"message": message}, format="json")


def test_a_submission_past_the_persons_cap_is_refused_with_member_cap_reached(owner, colleague, settings):
    settings.CREDITS_RESERVATION = RESERVATION_CREDITS
    set_cap(owner, 2 * RESERVATION_CREDITS)
    assert chat(owner).status_code == 202
    assert chat(owner).status_code == 202

    refused = chat(owner)

    assert refused.status_code == 402
    assert refused.json() == {"code": "member_cap_reached",
                              "detail": "You have reached your monthly limit in this organization."}
    assert Turn.objects.filter(user=owner.user).count() == 2
    # A colleague of the same organization, with no cap, still starts turns.
    assert chat(colleague).status_code == 202


def test_the_organizations_exhaustion_keeps_its_own_code(owner, acme):
    Organization.objects.filter(pk=acme.pk).update(monthly_credits=0)
    set_cap(owner, 100)

    refused = chat(owner)

    assert refused.status_code == 402 and refused.json()["code"] == "credits_exhausted"


def test_the_organizations_default_cap_applies_to_members_without_their_own(owner, colleague, acme, settings):
    settings.CREDITS_RESERVATION = RESERVATION_CREDITS
    Organization.objects.filter(pk=acme.pk).update(default_member_cap_credits=RESERVATION_CREDITS)
    set_cap(colleague, 10 * RESERVATION_CREDITS)  # their own cap wins over the default

    assert chat(owner).status_code == 202
    assert chat(owner).json()["code"] == "member_cap_reached"
    assert [chat(colleague).status_code for _ in range(2)] == [202, 202]


def test_a_turn_stops_at_the_cap_before_a_call_it_would_not_cover(owner, acme):
    set_cap(owner, 10)  # the organization has 1000 credits: only the cap stops this turn
    usage = Usage(2_000, 1_000)  # 7,000 micros a step at Haiku's prices
    client = ScriptedClient(*[call(SEARCH, text=f"Looking {i}.", usage=usage) for i in range(25)])

    turn = play(owner, client)

    assert turn.status == Turn.Status.FAILED and turn.failure_kind == Turn.FailureKind.CREDITS
    assert 1 < len(client.requests) < 25
    assert Message.objects.filter(turn_id=turn.id, role="assistant").last().notice == CAP_NOTICE
    assert member_spent_micros(CreditAccount.objects.get().pk, owner.user.id) <= micros_from_credits(10)
    assert LedgerEntry.objects.filter(turn_id=turn.id, kind="extend").exists()
    assert credits_audit_mismatches() == []


def test_a_cap_lowered_after_the_submission_stops_the_turn_at_its_next_hold(owner, acme, settings):
    """The submission checks the cap the request's guard read (Member.terms);
    the worker reads the row again before each call it must hold more for."""
    settings.CREDITS_RESERVATION = 0  # the first call's bound is held before it: the worker's check
    member = resolve_member(owner.user, None)
    assert member.terms.cap_credits is None
    submitted = chat_submit(member, message="Hello", conversation_id=None)
    Turn.objects.filter(id=submitted.turn_id).update(model_option=PRICED_OPTION)
    set_cap(owner, 0)  # an admin stops the person while the turn waits in the queue
    client = ScriptedClient(call(SEARCH))

    run_turn(submitted.turn_id, client=client, clock=Clock())

    turn = Turn.objects.get(id=submitted.turn_id)
    assert turn.failure_kind == Turn.FailureKind.CREDITS and client.requests == []
    assert not LedgerEntry.objects.filter(turn_id=turn.id, kind="extend").exists()


def test_the_submission_uses_the_cap_its_request_read_with_the_membership(owner, settings):
    """One request, one reading: a Member resolved before the cap was set
    carries no cap (a later request reads the new one)."""
    settings.CREDITS_RESERVATION = RESERVATION_CREDITS
    before = resolve_member(owner.user, None)
    set_cap(owner, RESERVATION_CREDITS - 1)

    assert chat_submit(before, message="Hello", conversation_id=None).turn_id
    with pytest.raises(MemberCapReached):
        chat_submit(resolve_member(owner.user, None), message="Hello", conversation_id=None)


def test_the_same_turn_without_a_cap_goes_on_to_the_step_bound(owner, acme):
    usage = Usage(2_000, 1_000)
    client = ScriptedClient(*[call(SEARCH, text=f"Looking {i}.", usage=usage) for i in range(25)])

    turn = play(owner, client)

    assert turn.failure_kind == Turn.FailureKind.BOUNDS and len(client.requests) == 25


CONVERSATIONS, COVERED = 8, 3


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_one_person_in_eight_conversations_at_once_gets_exactly_the_turns_the_cap_covers(acme, settings):
    settings.CREDITS_RESERVATION = RESERVATION_CREDITS
    person = make_person("racer", acme)
    set_cap(person, COVERED * RESERVATION_CREDITS)
    token = person.token

    def press_send(index: int) -> int:
        client = APIClient()  # one client (and connection) per thread
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        return client.post("/api/chat", {"message": f"conversation {index}"}, format="json").status_code

    statuses = race(CONVERSATIONS, press_send)

    assert sorted(statuses) == [202] * COVERED + [402] * (CONVERSATIONS - COVERED), statuses
    assert Turn.objects.count() == Thread.objects.count() == COVERED
    assert LedgerEntry.objects.filter(kind="reserve", actor=person.user).count() == COVERED
    account = CreditAccount.objects.get(organization=acme)
    assert member_spent_micros(account.pk, person.user.id) == COVERED * RESERVATION_CREDITS * 10_000
    assert credits_audit_mismatches() == []


def test_set_member_cap_sets_and_lifts_a_cap(owner):
    out = io.StringIO()
    call_command("set_member_cap", "acme", "olivia", "12", stdout=out)
    assert Membership.objects.get(user=owner.user).monthly_cap_credits == 12
    assert "a cap of 12 credits" in out.getvalue()

    call_command("set_member_cap", "acme", "olivia", "none", stdout=io.StringIO())

    assert Membership.objects.get(user=owner.user).monthly_cap_credits is None
    details = list(OrganizationChange.objects.order_by("id").values_list("action", "detail"))
    assert details == [("member_cap", "olivia: 12 credits"), ("member_cap", "olivia: no cap")]


@pytest.mark.parametrize("arguments, message", [
    (("acme", "olivia", "-1"), "zero or more"),
    (("acme", "olivia", "lots"), "whole number"),
    (("globex", "olivia", "5"), "not a member"),
    (("acme", "ghost", "5"), "not a member"),
])
def test_set_member_cap_refuses_bad_input(owner, globex, arguments, message):
    with pytest.raises(CommandError, match=message):
        call_command("set_member_cap", *arguments)
    assert Membership.objects.get(user=owner.user).monthly_cap_credits is None


def test_staff_set_caps_in_the_admin_and_the_change_is_recorded(owner, acme):
    from django.contrib.auth import get_user_model

    from tests.admin.conftest import logged_in

    staff = logged_in(get_user_model().objects.create_superuser("root", "root@example.com", "pw-root"))
    membership = Membership.objects.get(user=owner.user)
    form = {"user": owner.user.pk, "organization": acme.pk, "role": "member", "monthly_cap_credits": "7",
            "suspended_reason": ""}

    assert staff.post(f"/admin/assistant_organizations/membership/{membership.pk}/change/", form).status_code == 302

    assert Membership.objects.get(user=owner.user).monthly_cap_credits == 7
    change = OrganizationChange.objects.get()
    assert (change.action, change.detail, change.actor_username) == ("member_cap", "olivia: 7 credits", "root")

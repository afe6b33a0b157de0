"""A turn never spends more than the organization was granted: before each
model call the loop holds an upper bound of that call's cost."""

import uuid

import pytest

from assistant.models import Turn
from assistant.turn.outcome import CEILING_NOTICE, NOTICES
from assistant_engine.providers.catalog import model_option
from assistant_engine.providers.clients.base import Usage
from conversations.models import Message
from credits.models import CreditAccount, LedgerEntry
from credits.money import micros_from_credits, request_micros
from credits.selectors import credits_audit_mismatches
from tests.assistant.conftest import PRICED_OPTION, play
from tests.conversations.factories import stored_conversation
from tests.fakes.scripted import ScriptedClient, call, say

HAIKU = model_option(PRICED_OPTION)
SEARCH = ("search_notes", {"query": "budget"})


def set_credits(organization, credits):
    organization.monthly_credits = credits
    organization.save(update_fields=["monthly_credits"])


def account(organization):
    return CreditAccount.objects.get(organization=organization)


def upload_big_conversation(person, size=650_000):
    """A conversation of about `size` bytes uploaded as an offline client would."""
    conversation_id = uuid.uuid4()
    messages = [
        {"id": str(uuid.uuid4()), "role": "user" if i % 2 == 0 else "assistant",
         "content": "x" * 9_900, "createdAt": "2026-11-01T12:00:00Z"}
        for i in range(size // 10_000)
    ]
    body = stored_conversation(conversation_id, messages=messages)
    response = person.client.put(f"/api/conversations/{conversation_id}", body, format="json")
    assert response.status_code in (200, 201), response.content
    return conversation_id


def test_the_overdraft_scenario_makes_no_call_the_balance_cannot_cover(owner, acme):
    """3 credits left, a 650 KB conversation, a priced model that would call
    search_notes 25 times (before: about 1,225 credits charged)."""
    set_credits(acme, 3)
    conversation_id = upload_big_conversation(owner)
    client = ScriptedClient(*[call(SEARCH, usage=Usage(170_000, 100))] * 25)

    turn = play(owner, client, message="Search my notes", conversation_id=conversation_id)

    assert turn.status == Turn.Status.FAILED and turn.failure_kind == Turn.FailureKind.CREDITS
    assert client.requests == [] and turn.cost_micros == 0
    held = account(acme)
    assert (held.used_micros, held.reserved_micros) == (0, 0)
    reply = Message.objects.filter(turn_id=turn.id, role="assistant").get()
    assert reply.notice == NOTICES[Turn.FailureKind.CREDITS][:300] and "credits ran out" in reply.notice
    assert credits_audit_mismatches() == []


def test_a_many_step_turn_stops_when_the_next_call_is_not_covered_and_keeps_its_text(owner, acme):
    set_credits(acme, 10)
    usage = Usage(2_000, 1_000)  # 7,000 micros a step at Haiku's prices
    client = ScriptedClient(*[call(SEARCH, text=f"Looking {i}.", usage=usage) for i in range(25)])

    turn = play(owner, client)

    made = len(client.requests)
    assert turn.failure_kind == Turn.FailureKind.CREDITS and 1 < made < 25
    # Every call made was covered, and charged at its real cost, nothing more.
    spent = request_micros(HAIKU, Usage(2_000 * made, 1_000 * made))
    held = account(acme)
    assert (held.used_micros, held.reserved_micros) == (spent, 0) and turn.cost_micros == spent
    assert held.used_micros <= held.granted_micros
    assert LedgerEntry.objects.filter(turn_id=turn.id, kind="extend").exists()
    replies = Message.objects.filter(turn_id=turn.id, role="assistant").order_by("seq")
    assert [r.content for r in replies] == [f"Looking {i}." for i in range(made)]
    assert replies.last().status == "failed" and "credits ran out" in replies.last().notice
    assert credits_audit_mismatches() == []


def test_the_per_turn_ceiling_stops_a_turn_the_balance_would_still_cover(owner, acme, settings):
    settings.ASSISTANT_TURN_MAX_CREDITS = 5
    client = ScriptedClient(*[call(SEARCH, usage=Usage(2_000, 1_000))] * 25)

    turn = play(owner, client)

    assert turn.failure_kind == Turn.FailureKind.CREDITS and 1 <= len(client.requests) < 25
    assert turn.cost_micros <= micros_from_credits(5)
    assert Message.objects.filter(turn_id=turn.id, role="assistant").last().notice == CEILING_NOTICE


def test_a_covered_turn_holds_nothing_more_than_its_start_reservation(owner, acme):
    turn = play(owner, ScriptedClient(say("Short answer.", usage=Usage(1_000, 200))))

    assert turn.status == Turn.Status.DONE
    assert list(LedgerEntry.objects.filter(turn_id=turn.id).values_list("kind", flat=True)) == ["reserve", "settle"]


@pytest.mark.parametrize("option", ["offline"])
def test_a_free_model_never_holds_more(owner, option):
    from assistant.loop import run_turn
    from tests.assistant.conftest import Clock, submit

    turn = submit(owner, option=option)
    run_turn(turn.id, client=ScriptedClient(*[call(SEARCH)] * 5, say("done")), clock=Clock())

    assert not LedgerEntry.objects.filter(turn_id=turn.id, kind="extend").exists()
    assert Turn.objects.get(id=turn.id).status == Turn.Status.DONE

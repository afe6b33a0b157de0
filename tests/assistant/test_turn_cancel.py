"""Stop: POST /api/turns/{id}/cancel ends a queued turn at once (no cost) and a
running one at the loop's next safe point (the text so far kept, credits
settled to what was spent)."""

import uuid

import pytest
from django.db import connection

from assistant.loop import run_turn
from assistant.models import Turn
from assistant.turn.outcome import CANCELLED_NOTICE
from assistant.turn.request import RequestPhase
from assistant.turn.state import TurnState
from assistant.turns import turn_cancel
from assistant_engine.providers.catalog import model_option
from assistant_engine.providers.clients.base import Stop, TextDelta, Usage
from assistant_engine.tools import framework
from conversations.models import Message, Thread, ToolCall
from credits.models import CreditAccount, LedgerEntry
from credits.money import request_micros
from tests.assistant.conftest import PRICED_OPTION, Clock, submit
from tests.fakes.scripted import ScriptedClient, call, say

HAIKU = model_option(PRICED_OPTION)


def cancel_url(turn_id) -> str:
    return f"/api/turns/{turn_id}/cancel"


def account(organization) -> CreditAccount:
    return CreditAccount.objects.get(organization=organization)


def test_owner_stops_a_queued_turn_at_once_and_at_no_cost(owner, acme):
    turn = submit(owner)
    assert account(acme).reserved_micros > 0

    response = owner.client.post(cancel_url(turn.id))

    assert response.status_code == 200 and response.json() == {"id": str(turn.id), "status": "cancelled"}
    turn.refresh_from_db()
    assert turn.status == Turn.Status.CANCELLED and turn.cost_micros == 0 and turn.finished_at
    held = account(acme)
    assert (held.used_micros, held.reserved_micros) == (0, 0)
    assert LedgerEntry.objects.filter(turn_id=turn.id).values_list("kind", flat=True).last() == "release"
    reply = Message.objects.get(turn_id=turn.id, role="assistant")
    assert reply.notice == CANCELLED_NOTICE and reply.content == ""
    assert Thread.objects.get(id=turn.thread_id).status == Thread.Status.IDLE
    # The task delivered afterwards finds nothing to claim: no model call.
    assert run_turn(turn.id, client=ScriptedClient(), clock=Clock()) is None


@pytest.mark.parametrize("who", ["colleague", "outsider"])
def test_others_get_404_and_the_turn_goes_on(owner, colleague, outsider, who):
    turn = submit(owner)
    person = {"colleague": colleague, "outsider": outsider}[who]
    response = person.client.post(cancel_url(turn.id))
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    turn.refresh_from_db()
    assert turn.status == Turn.Status.QUEUED and turn.cancel_requested_at is None


def test_anonymous_gets_401(owner, anonymous):
    turn = submit(owner)
    assert anonymous.post(cancel_url(turn.id)).status_code == 401
    turn.refresh_from_db()
    assert turn.status == Turn.Status.QUEUED


def test_an_unknown_or_malformed_id(owner):
    assert owner.client.post(cancel_url(uuid.uuid4())).status_code == 404
    response = owner.client.post(cancel_url("not-a-uuid"))
    assert response.status_code == 400 and response.json()["code"] == "invalid_id"


def test_a_turn_that_has_ended_answers_409_turn_ended(owner):
    turn = submit(owner)
    run_turn(turn.id, client=ScriptedClient(say("Done.")), clock=Clock())
    response = owner.client.post(cancel_url(turn.id))
    assert response.status_code == 409 and response.json()["code"] == "turn_ended"
    turn.refresh_from_db()
    assert turn.status == Turn.Status.DONE and turn.cancel_requested_at is None


def test_a_cancelled_turn_answers_409_the_second_time(owner):
    turn = submit(owner)
    assert owner.client.post(cancel_url(turn.id)).status_code == 200
    response = owner.client.post(cancel_url(turn.id))
    assert response.status_code == 409 and response.json()["code"] == "turn_ended"


def test_a_running_turn_is_flagged_and_asking_twice_answers_the_same(owner):
    turn = submit(owner)
    Turn.objects.filter(id=turn.id).update(status=Turn.Status.RUNNING)
    first = owner.client.post(cancel_url(turn.id))
    flagged_at = Turn.objects.get(id=turn.id).cancel_requested_at
    second = owner.client.post(cancel_url(turn.id))
    assert (first.status_code, second.status_code) == (202, 202)
    assert second.json() == {"id": str(turn.id), "status": "running"}
    turn.refresh_from_db()
    assert turn.status == Turn.Status.RUNNING and turn.cancel_requested_at == flagged_at is not None


def test_a_stop_seen_before_the_first_model_call_makes_no_call(owner, acme):
    turn = submit(owner)
    # The Stop lands just after the worker's claim: the first safe point sees it.
    Turn.objects.filter(id=turn.id).update(cancel_requested_at=turn.created_at)
    client = ScriptedClient()
    run_turn(turn.id, client=client, clock=Clock())
    turn.refresh_from_db()
    assert turn.status == Turn.Status.CANCELLED and client.requests == [] and turn.cost_micros == 0
    assert (account(acme).used_micros, account(acme).reserved_micros) == (0, 0)


def test_a_stop_accepted_after_the_turns_start_read_makes_no_call(owner, acme, monkeypatch):
    """The Stop lands while the worker checks the member and opens the client,
    after it read the turn's row: the history's read carries the flag (no query more)."""
    turn = submit(owner)
    open_client = RequestPhase._open_client

    def open_then_stopped(self):
        open_client(self)
        assert turn_cancel(owner.member, turn_id=turn.id).status == Turn.Status.RUNNING  # flagged

    monkeypatch.setattr(RequestPhase, "_open_client", open_then_stopped)
    client = ScriptedClient(say("Never asked."))
    run_turn(turn.id, client=client, clock=Clock())
    turn.refresh_from_db()
    assert turn.status == Turn.Status.CANCELLED and client.requests == [] and turn.cost_micros == 0
    assert (account(acme).used_micros, account(acme).reserved_micros) == (0, 0)


@pytest.mark.django_db(transaction=True)
def test_a_stop_while_streaming_closes_the_stream_keeps_the_text_and_charges_an_upper_estimate(owner, acme):
    turn = submit(owner)
    closed = []

    def stopped_by_the_person(request):
        try:
            # The person's Stop arrives once the stream is open (another
            # connection, as a web request would), before the first word is read.
            turn_cancel(owner.member, turn_id=turn.id)
            yield TextDelta("Hello ")
            yield TextDelta("there, ")
            yield from [TextDelta(f"word{i} ") for i in range(50)]
            yield Usage(1000, 200)
        finally:
            closed.append(True)
            connection.close()

    # Each clock reading moves a second: every event is past the check interval.
    run_turn(turn.id, client=ScriptedClient(stopped_by_the_person), clock=Clock(step=1.0))

    turn.refresh_from_db()
    assert turn.status == Turn.Status.CANCELLED and turn.failure_kind == ""
    reply = Message.objects.get(turn_id=turn.id, role="assistant")
    # The first event is taken, then the check that follows it stops the turn.
    assert reply.content == "Hello " and reply.notice == CANCELLED_NOTICE and reply.status == "complete"
    assert closed == [True]  # the model's stream was closed, not read to its end
    # No usage was reported: the whole input bound and one token per byte written.
    assert turn.output_tokens == len("Hello ") and turn.input_tokens > 0
    assert turn.cost_micros == request_micros(HAIKU, Usage(turn.input_tokens, turn.output_tokens)) > 0
    held = account(acme)
    assert (held.used_micros, held.reserved_micros) == (turn.cost_micros, 0)


@pytest.mark.django_db(transaction=True)
def test_a_streams_text_writes_are_its_stop_checks(owner, acme, monkeypatch):
    """Issue 36.2: while text flows, each write of it (after the first, an
    INSERT) is the Stop check: no read of the flag of its own then, and a Stop
    still ends the stream at the next write, the text kept whole."""
    turn = submit(owner)
    reads = []
    real_read = TurnState._stop_if_cancelled
    monkeypatch.setattr(TurnState, "_stop_if_cancelled", lambda self, **kw: reads.append(1) or real_read(self, **kw))

    def words_then_stopped(request):
        try:
            yield from [TextDelta(f"word{i} ") for i in range(6)]
            turn_cancel(owner.member, turn_id=turn.id)
            yield from [TextDelta(f"late{i} ") for i in range(6)]
            yield Usage(1000, 20)
        finally:
            connection.close()

    # Every clock reading moves 0.2 s: each word is due to be written, the Stop's interval passes too.
    # The stream read in this thread (no reader thread, no pauses): the order of events is the script's.
    monkeypatch.setattr("assistant.turn.stream.paced", lambda open_stream, wait_seconds: open_stream())
    run_turn(turn.id, client=ScriptedClient(words_then_stopped), clock=Clock(step=0.2))

    turn.refresh_from_db()
    reply = Message.objects.get(turn_id=turn.id, role="assistant")
    # One read, after the first write (an INSERT, which can't check): none once the text is updated.
    assert turn.status == Turn.Status.CANCELLED and reads == [1]
    # The Stop is seen at the first write after it: the word that write carried is kept, nothing after it.
    assert reply.content == "word0 word1 word2 word3 word4 word5 late0 "


@pytest.mark.django_db(transaction=True)
def test_a_stopped_call_is_never_charged_more_output_than_it_could_produce(owner, acme, settings):
    """One token per byte written is the high side, bounded by the call's max_tokens:
    20,000 bytes from a call allowed 100 tokens cost 100 tokens, within the hold."""
    settings.ASSISTANT_MAX_OUTPUT_TOKENS = 100
    turn = submit(owner)

    def long_then_stopped(request):
        try:
            yield TextDelta("x" * 20_000)
            turn_cancel(owner.member, turn_id=turn.id)
            yield TextDelta("more")
            yield Usage(1000, 100)
        finally:
            connection.close()

    run_turn(turn.id, client=ScriptedClient(long_then_stopped), clock=Clock(step=1.0))
    turn.refresh_from_db()
    assert turn.status == Turn.Status.CANCELLED
    assert turn.output_tokens == 100 and turn.cost_micros <= turn.reserved_micros
    held = account(acme)
    assert (held.used_micros, held.reserved_micros) == (turn.cost_micros, 0)


def test_a_stop_during_a_tool_call_lets_it_finish_and_starts_no_other(owner, acme, notes, monkeypatch):
    turn = submit(owner)
    real_execute = framework.execute

    def execute_then_stop(tool, member, parsed, **kwargs):
        result = real_execute(tool, member, parsed, **kwargs)
        turn_cancel(owner.member, turn_id=turn.id)  # pressed while the tool ran
        return result

    monkeypatch.setattr(framework, "execute", execute_then_stop)
    client = ScriptedClient(call(("search_notes", {"query": "Zurich"}), ("search_notes", {"query": "budget"}),
                                 usage=Usage(1000, 200)))
    run_turn(turn.id, client=client, clock=Clock())

    turn.refresh_from_db()
    assert turn.status == Turn.Status.CANCELLED and len(client.requests) == 1
    [stored] = ToolCall.objects.filter(message__turn_id=turn.id)
    assert stored.input == {"query": "Zurich"} and stored.finished_at and not stored.is_error
    # Usage was reported: exactly that is charged.
    assert turn.cost_micros == request_micros(HAIKU, Usage(1000, 200)) == account(acme).used_micros
    assert account(acme).reserved_micros == 0


def test_a_stop_during_a_steps_last_tool_call_starts_no_next_model_call(owner, acme, notes, monkeypatch):
    """Issue 36.2: the step's progress write is the next call's Stop check (it
    writes only a turn without a Stop); the turn's end still records the step."""
    turn = submit(owner)
    real_execute = framework.execute

    def execute_then_stop(tool, member, parsed, **kwargs):
        result = real_execute(tool, member, parsed, **kwargs)
        turn_cancel(owner.member, turn_id=turn.id)
        return result

    monkeypatch.setattr(framework, "execute", execute_then_stop)
    client = ScriptedClient(call(("search_notes", {"query": "Zurich"}), usage=Usage(1000, 200)), say("Never asked."))
    run_turn(turn.id, client=client, clock=Clock())

    turn.refresh_from_db()
    assert turn.status == Turn.Status.CANCELLED and len(client.requests) == 1
    assert (turn.steps, turn.tool_calls, turn.input_tokens) == (1, 1, 1000)
    assert account(acme).reserved_micros == 0 and account(acme).used_micros == turn.cost_micros > 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("script", ["text", "tools then text"])
def test_a_stop_accepted_while_a_fast_model_finishes_ends_the_turn_cancelled(owner, acme, notes, script):
    """`make run`'s offline model answers faster than the loop's check interval:
    the Stop was accepted (202 running) and the turn still ended `done` with
    its whole text. Once accepted, the turn ends cancelled, its text kept."""
    turn = submit(owner)
    accepted = []

    def stopped_before_the_end(request):
        try:
            yield TextDelta("Your inbox ")
            # Another connection, as the web request is; the clock does not move,
            # so the loop's throttled check never reads the flag during the stream.
            accepted.append(turn_cancel(owner.member, turn_id=turn.id).status)
            yield TextDelta("holds three messages.")
            yield Usage(1000, 20)
        finally:
            connection.close()

    steps = [stopped_before_the_end]
    if script == "tools then text":
        steps.insert(0, call(("search_notes", {"query": "Zurich"})))
    client = ScriptedClient(*steps)
    run_turn(turn.id, client=client, clock=Clock())

    assert accepted == [Turn.Status.RUNNING]
    turn.refresh_from_db()
    assert turn.status == Turn.Status.CANCELLED and turn.failure_kind == ""
    reply = Message.objects.filter(turn_id=turn.id, role="assistant").order_by("seq").last()
    assert reply.content == "Your inbox holds three messages." and reply.notice == CANCELLED_NOTICE
    assert Thread.objects.get(id=turn.thread_id).status == Thread.Status.IDLE
    # What the model was paid for is charged, the rest released.
    held = account(acme)
    assert (held.used_micros, held.reserved_micros) == (turn.cost_micros, 0) and turn.cost_micros > 0
    # The Stop was accepted once: asked again, the turn has ended.
    assert owner.client.post(cancel_url(turn.id)).json()["code"] == "turn_ended"


@pytest.mark.django_db(transaction=True)
def test_a_stop_accepted_between_the_model_and_its_tool_calls_starts_none(owner, acme, notes):
    turn = submit(owner)

    def tools_then_stop(request):
        try:
            yield from call(("search_notes", {"query": "Zurich"}), ("search_notes", {"query": "budget"}))[:-1]
            turn_cancel(owner.member, turn_id=turn.id)
            yield Stop("tool_use")
        finally:
            connection.close()

    client = ScriptedClient(tools_then_stop)
    run_turn(turn.id, client=client, clock=Clock())
    turn.refresh_from_db()
    assert turn.status == Turn.Status.CANCELLED and len(client.requests) == 1
    assert not ToolCall.objects.filter(message__turn_id=turn.id).exists()

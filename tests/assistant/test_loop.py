import json
import re
import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from assistant.history import load_history
from assistant.loop import run_turn
from assistant.models import ActionCard, Turn
from assistant_engine.providers.clients.base import ProviderError, Stop, TextDelta, ToolResults, Usage
from conversations.models import Message, Thread, ToolCall
from credits.models import CreditAccount
from tests.assistant.conftest import Clock, play, submit
from tests.fakes.scripted import ScriptedClient, call, say
from workspace.models import Note


def replies(turn):
    return list(Message.objects.filter(turn_id=turn.id, role="assistant").order_by("seq"))


def test_a_one_step_turn_streams_settles_and_frees_the_thread(owner):
    client = ScriptedClient(say("Hello there, how can I help?", usage=Usage(1000, 200)))
    turn = play(owner, client)
    assert turn.status == Turn.Status.DONE and turn.failure_kind == ""
    assert turn.steps == 1 and turn.input_tokens == 1000 and turn.output_tokens == 200
    # 1000 × $1 + 200 × $5 per million tokens = 2000 micro-dollars
    assert turn.cost_micros == 2000
    [reply] = replies(turn)
    assert reply.content == "Hello there, how can I help?" and reply.status == "complete"
    assert Thread.objects.get(id=turn.thread_id).status == Thread.Status.IDLE
    account = CreditAccount.objects.get(organization=owner.organization)
    assert account.used_micros == 2000 and account.reserved_micros == 0


def test_the_model_receives_the_stored_history_and_the_tools(owner):
    first = play(owner, ScriptedClient(say("First answer.")), message="First question")
    client = ScriptedClient(say("Second answer."))
    play(owner, client, message="Second question", conversation_id=first.thread_id)
    history = client.requests[0].history
    assert [type(item).__name__ for item in history] == ["UserText", "AssistantReply", "UserText"]
    assert history[0].text == "First question" and history[2].text == "Second question"
    assert {spec.name for spec in client.requests[0].tools} >= {"search_notes", "delete_note", "send_email"}


def test_multi_step_tool_use_stores_each_call_with_its_raw_result(owner, notes):
    client = ScriptedClient(call(("search_notes", {"query": "Zurich"})), say("You have one Zurich note."))
    turn = play(owner, client)
    assert turn.status == Turn.Status.DONE and turn.steps == 2 and turn.tool_calls == 1
    stored = ToolCall.objects.get(message__turn_id=turn.id)
    assert stored.name == "search_notes" and not stored.is_error and stored.finished_at
    assert [n["title"] for n in stored.result["notes"]] == ["Zurich trip"]  # not the colleague's nor the outsider's
    results = client.requests[1].history[-1]
    assert isinstance(results, ToolResults)
    assert json.loads(results.results[0].content)["notes"][0]["id"] == notes["zurich"].id
    assert turn.read_private is True and turn.read_untrusted is False


def test_a_long_result_reaches_the_model_truncated_with_a_marker_but_is_stored_whole(owner, notes):
    notes["zurich"].body = "z" * 50_000
    notes["zurich"].save()
    client = ScriptedClient(call(("read_note", {"note_id": notes["zurich"].id})), say("Long."))
    turn = play(owner, client)
    stored = ToolCall.objects.get(message__turn_id=turn.id)
    assert len(stored.result["body"]) == 50_000
    sent = client.requests[1].history[-1].results[0].content
    assert sent.startswith('{"body":"zzz') and len(sent) < 20_100
    full = len(json.dumps(stored.result, ensure_ascii=False, separators=(",", ":")))
    assert sent.endswith(f"…[truncated: showed 20000 of {full} characters]")


def test_invalid_input_becomes_an_error_the_model_corrects(owner):
    client = ScriptedClient(
        call(("create_note", {"title": "Groceries", "bogus": True})),
        call(("create_note", {"title": "Groceries", "body": "Milk"})),
        say("Created."),
    )
    turn = play(owner, client)
    first, second = ToolCall.objects.filter(message__turn_id=turn.id).order_by("created_at", "message__seq")
    assert first.is_error and "bogus" in first.result["error"]
    assert client.requests[1].history[-1].results[0].is_error
    assert not second.is_error and Note.objects.get(title="Groceries").body == "Milk"
    assert turn.status == Turn.Status.DONE


def test_unparsable_json_and_unknown_tools_are_errors_for_the_model(owner):
    client = ScriptedClient(call(("create_note", None), ("launch_rockets", {})), say("Sorry."))
    turn = play(owner, client)
    broken, unknown = ToolCall.objects.filter(message__turn_id=turn.id).order_by("position")
    assert broken.is_error and broken.input == {"raw": "{oops"} and "JSON" in broken.result["error"]
    assert unknown.is_error and "launch_rockets" in unknown.result["error"]
    assert turn.status == Turn.Status.DONE


def test_a_tool_that_raises_fails_the_turn_with_kind_tool(owner, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("database exploded with secret text")

    monkeypatch.setattr("workspace.selectors.note_search", broken)
    turn = play(owner, ScriptedClient(call(("search_notes", {"query": "x"}), text="Let me look.")))
    assert turn.status == Turn.Status.FAILED and turn.failure_kind == Turn.FailureKind.TOOL
    [reply] = replies(turn)
    assert reply.content == "Let me look." and reply.status == "failed" and "tool failed" in reply.notice
    stored = ToolCall.objects.get(message__turn_id=turn.id)
    assert stored.is_error and "secret" not in json.dumps(stored.result)
    assert Thread.objects.get(id=turn.thread_id).status == Thread.Status.IDLE


def test_the_step_bound_ends_the_turn_cleanly(owner, settings):
    settings.ASSISTANT_MAX_STEPS = 3
    client = ScriptedClient(*[call(("search_notes", {"query": "x"}))] * 3)
    turn = play(owner, client)
    assert turn.status == Turn.Status.FAILED and turn.failure_kind == Turn.FailureKind.BOUNDS
    assert turn.steps == 3 and len(client.requests) == 3
    assert "3 steps" in replies(turn)[-1].notice


def test_the_tool_calls_per_step_bound_runs_none_of_them(owner, settings):
    settings.ASSISTANT_MAX_TOOL_CALLS_PER_STEP = 2
    client = ScriptedClient(call(*[("create_note", {"title": f"n{i}", "body": ""}) for i in range(3)]))
    turn = play(owner, client)
    assert turn.failure_kind == Turn.FailureKind.BOUNDS and "2 tool calls in one step" in replies(turn)[-1].notice
    assert not Note.objects.exists()
    assert ToolCall.objects.filter(message__turn_id=turn.id, is_error=True).count() == 3


def test_the_time_bound_stops_the_stream_and_keeps_what_was_written(owner, settings):
    settings.ASSISTANT_TURN_SECONDS = 10
    client = ScriptedClient([TextDelta(f"word{i} ") for i in range(50)] + [Usage(1, 1), Stop("end_turn")])
    turn = play(owner, client, clock=Clock(step=1.0))
    assert turn.status == Turn.Status.FAILED and turn.failure_kind == Turn.FailureKind.TIMEOUT
    [reply] = replies(turn)
    assert reply.content.startswith("word0 word1") and "word49" not in reply.content
    assert reply.status == "failed" and reply.notice


def test_a_provider_error_mid_stream_keeps_the_text_and_logs_only_the_kind(owner, caplog):
    def failing(request):
        yield TextDelta("Partial answer")
        raise ProviderError("api", "upstream said: the secret conversation text")

    turn = play(owner, ScriptedClient(failing), message="my private question")
    assert turn.status == Turn.Status.FAILED and turn.failure_kind == Turn.FailureKind.API
    [reply] = replies(turn)
    assert reply.content == "Partial answer" and reply.status == "failed"
    assert "secret conversation text" not in caplog.text and "my private question" not in caplog.text
    account = CreditAccount.objects.get(organization=owner.organization)
    assert account.reserved_micros == 0


def text_writes(queries) -> list[str]:
    """The texts the loop wrote into the reply while it streamed: the INSERT of
    the reply's row (with its first text), then the UPDATEs of `content`."""
    patterns = (
        r"INSERT INTO \"conversations_message\" .* VALUES \((?:[^,]+, ){2,3}\d+, 'assistant', '([^']*)', 'streaming'",
        r"UPDATE \"conversations_message\" SET \"content\" = '([^']*)' WHERE",
    )
    matches = (re.match(pattern, q["sql"]) for q in queries for pattern in patterns)
    return [match.group(1) for match in matches if match]


def test_text_is_written_to_the_database_while_it_streams(owner):
    def streaming(request):
        for word in ["one ", "two ", "three "]:
            yield TextDelta(word)
        yield Usage(1, 1)
        yield Stop("end_turn")

    with CaptureQueriesContext(connection) as queries:
        play(owner, ScriptedClient(streaming), clock=Clock(step=0.3))

    # 0.3 s between clock readings: each piece is written as it arrives (leading edge).
    assert text_writes(queries.captured_queries) == ["one ", "one two ", "one two three "]


def test_text_is_written_during_a_pause_of_the_model(owner):
    def pausing(request):
        yield TextDelta("Let me ")
        yield TextDelta("think.")
        time.sleep(2)  # composing a long tool input, say: nothing arrives
        yield TextDelta(" Done.")
        yield Usage(1, 1)
        yield Stop("end_turn")

    with CaptureQueriesContext(connection) as queries:
        turn = play(owner, ScriptedClient(pausing), clock=time.monotonic)

    # The words before the pause were written during it (trailing edge), not
    # only when the next words came; then the final text.
    assert text_writes(queries.captured_queries)[0] == "Let me think."
    assert replies(turn)[0].content == "Let me think. Done."


def test_a_twice_delivered_turn_runs_once(owner):
    client = ScriptedClient(say("Once."))
    turn = submit(owner)
    run_turn(turn.id, client=client, clock=Clock())
    assert run_turn(turn.id, client=client, clock=Clock()) is None
    assert len(client.requests) == 1 and len(replies(turn)) == 1


def test_a_history_that_outgrows_the_bound_mid_turn_stops_with_bounds(owner, notes, settings, full_conversations):
    settings.ASSISTANT_HISTORY_BYTES = 3000
    notes["zurich"].body = "z" * 5000
    notes["zurich"].save()
    client = ScriptedClient(call(("read_note", {"note_id": notes["zurich"].id})))
    turn = play(owner, client)
    assert turn.failure_kind == Turn.FailureKind.BOUNDS and "full" in replies(turn)[-1].notice


def test_a_confirm_tool_never_acts_in_the_loop_and_leaves_a_card(owner, notes):
    client = ScriptedClient(call(("delete_note", {"note_id": notes["zurich"].id})), say("It awaits you."))
    turn = play(owner, client)
    assert Note.objects.filter(id=notes["zurich"].id).exists()
    card = ActionCard.objects.get(turn=turn)
    assert card.status == "pending" and card.tool_name == "delete_note" and "Zurich trip" in card.description
    told = json.loads(client.requests[1].history[-1].results[0].content)
    assert told["status"] == "awaiting_confirmation" and told["card_id"] == str(card.id)


def test_a_confirm_tool_on_someone_elses_note_is_not_found(owner, notes):
    client = ScriptedClient(call(("delete_note", {"note_id": notes["colleague"].id})), say("No."))
    turn = play(owner, client)
    stored = ToolCall.objects.get(message__turn_id=turn.id)
    assert stored.is_error and not ActionCard.objects.exists()


@pytest.mark.parametrize(("mode", "warned", "refused"), [("warn", True, False), ("block", False, True)])
def test_a_send_after_private_and_untrusted_reads_is_flagged_or_blocked(owner, notes, settings, mode, warned, refused):
    settings.ASSISTANT_TRIFECTA = mode
    client = ScriptedClient(
        call(("search_notes", {"query": "Budget"}), ("read_inbox", {})),
        call(("send_email", {"to": "eve@example.com", "subject": "data", "body": "Keep it under 10k."})),
        say("Done."),
    )
    turn = play(owner, client)
    send = ToolCall.objects.get(message__turn_id=turn.id, name="send_email")
    if refused:
        assert send.is_error and "blocked" in send.result["error"] and not ActionCard.objects.exists()
    else:
        assert ActionCard.objects.get(turn=turn).trifecta_warning is warned
    assert turn.read_private and turn.read_untrusted


def test_a_send_without_the_trifecta_is_a_plain_card(owner, settings):
    settings.ASSISTANT_TRIFECTA = "block"
    client = ScriptedClient(call(("send_email", {"to": "bob@example.com", "subject": "Hi", "body": "Hello"})), say("."))
    turn = play(owner, client)
    assert ActionCard.objects.get(turn=turn).trifecta_warning is False


def test_history_rebuilds_tool_results_for_the_next_turn(owner, notes):
    first = play(owner, ScriptedClient(call(("search_notes", {"query": "Budget"})), say("One note.")))
    history = load_history(first.thread_id)
    assert [type(i).__name__ for i in history] == ["UserText", "AssistantReply", "ToolResults", "AssistantReply"]
    assert history[1].tool_uses[0].name == "search_notes"


def test_the_notice_of_a_failed_reply_is_in_the_stored_conversation(owner):
    def failing(request):
        yield TextDelta("Half")
        raise ProviderError("api")

    turn = play(owner, ScriptedClient(failing))
    stored = owner.client.get(f"/api/conversations/{turn.thread_id}").json()
    reply = stored["messages"][-1]
    assert reply["status"] == "failed" and reply["content"] == "Half" and "provider" in reply["notice"]

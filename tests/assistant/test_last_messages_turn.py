"""Issue 34.12: under an organization's "last" choice (the chlova seed's window),
each request of a turn carries exactly the last HISTORY_WINDOW (20) messages
before the turn (the person's and the assistant's, each with its tool calls and
their results), then the turn itself: seen in what the loop asks the model
(a scripted client) and in the bodies the official SDKs send over the wire."""

import pytest

from assistant.history_fit import EARLIER_LEFT_OUT
from assistant_engine.organizations.models import Organization
from assistant_engine.providers.catalog import CATALOG
from assistant_engine.providers.clients.base import AssistantReply, ToolResults, UserText
from conversations.models import Message, Thread, ToolCall
from tests.assistant.conftest import Clock, play
from tests.assistant.test_long_conversations import WORDS, fake_for, provider_client, seed_conversation, turn_on
from tests.fakes.scripted import ScriptedClient, call, say

NEW = "And now?"


@pytest.fixture
def last(owner):
    Organization.objects.filter(pk=owner.organization.pk).update(history_mode=Organization.HistoryMode.LAST)


def stored(*seqs) -> list[str]:
    return [f"#{seq} {WORDS}" for seq in seqs]


def texts(history) -> list[str]:
    return [item.text for item in history if not isinstance(item, ToolResults)]


def test_the_model_gets_the_last_20_messages_then_the_persons_new_one(owner, last):
    thread = seed_conversation(owner, 60)
    client = ScriptedClient(say("Done."))
    assert play(owner, client, NEW, conversation_id=thread.id).status == "done"
    [request] = client.requests
    assert texts(request.history) == [*stored(*range(40, 60)), NEW]
    assert isinstance(request.history[0], UserText) and isinstance(request.history[1], AssistantReply)


def test_the_turns_own_steps_are_sent_whole_beside_the_20(owner, last):
    thread = seed_conversation(owner, 60)
    client = ScriptedClient(call(("search_notes", {"query": "budget"})), say("Done."))
    assert play(owner, client, NEW, conversation_id=thread.id).status == "done"
    first, second = client.requests
    assert texts(first.history) == [*stored(*range(40, 60)), NEW]
    *window, reply, results = second.history
    assert texts(window) == [*stored(*range(40, 60)), NEW]
    assert [use.id for use in reply.tool_uses] == [result.tool_use_id for result in results.results]


def test_a_window_beginning_on_a_reply_with_a_tool_call_keeps_its_result_and_opens_on_the_persons_side(
        owner, last):
    thread = seed_conversation(owner, 61)  # the last stored message (60) is the person's, never answered
    reply = Message.objects.get(thread=thread, seq=41)
    ToolCall.objects.create(message=reply, tool_use_id="notes_1", name="search_notes", input={"query": "q"},
                            result={"notes": []}, created_at=reply.created_at, finished_at=reply.created_at)
    client = ScriptedClient(say("Done."))
    play(owner, client, NEW, conversation_id=thread.id)
    history = client.requests[0].history
    assert history[0] == EARLIER_LEFT_OUT
    assert history[1].text == stored(41)[0] and [use.id for use in history[1].tool_uses] == ["notes_1"]
    assert [result.tool_use_id for result in history[2].results] == ["notes_1"]
    assert texts(history[3:]) == [*stored(*range(42, 61)), NEW]


def test_a_continuous_conversation_gets_the_same_window(owner, last):
    thread = seed_conversation(owner, 60)
    Thread.objects.filter(pk=thread.pk).update(continuous=True)
    client = ScriptedClient(say("Done."))
    play(owner, client, NEW, conversation_id=thread.id)
    assert texts(client.requests[0].history) == [*stored(*range(40, 60)), NEW]


def test_the_window_follows_history_window(owner, last, settings):
    settings.HISTORY_WINDOW = 3
    thread = seed_conversation(owner, 10)
    client = ScriptedClient(say("Done."))
    play(owner, client, NEW, conversation_id=thread.id)
    assert texts(client.requests[0].history) == [EARLIER_LEFT_OUT.text, *stored(7, 8, 9), NEW]


def test_without_the_choice_the_whole_short_conversation_is_sent(owner):
    thread = seed_conversation(owner, 60)
    client = ScriptedClient(say("Done."))
    play(owner, client, NEW, conversation_id=thread.id)
    assert texts(client.requests[0].history) == [*stored(*range(60)), NEW]


WIRE_OPTIONS = [next(o for o in CATALOG if o.provider == provider) for provider in ("anthropic", "infomaniak")]


def wire_texts(body: dict) -> list[str]:
    """The messages' texts as the provider received them (the system prompt apart)."""
    sent = []
    for message in body["messages"]:
        content = message["content"]
        if message["role"] != "system":
            sent += [content] if isinstance(content, str) else [b["text"] for b in content if b["type"] == "text"]
    return sent


@pytest.mark.parametrize("option", WIRE_OPTIONS, ids=lambda option: option.provider)
def test_the_providers_wire_carries_exactly_the_20_and_the_new_message(owner, last, option, settings,
                                                                          monkeypatch):
    from assistant.loop import run_turn
    from assistant.models import Turn

    thread = seed_conversation(owner, 60)
    fake = fake_for(option)
    with fake.server() as server:
        client = provider_client(option, settings, monkeypatch, server.url)
        turn_id = turn_on(owner, thread, option, NEW)
        run_turn(turn_id, client=client, clock=Clock())
    assert Turn.objects.get(id=turn_id).status == "done"
    [request] = server.requests
    assert wire_texts(request.json()) == [*stored(*range(40, 60)), NEW]

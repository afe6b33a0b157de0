"""The context window of continuous conversations: the pure function
exhaustively, then the hook in the loop and in chat_submit."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assistant.chat import ConversationFull, chat_submit
from assistant.history_window import WindowItem, window_start
from assistant.loop import run_turn
from assistant.models import Turn
from assistant_engine.organizations.models import Organization
from assistant_engine.providers.clients.base import AssistantReply, ToolResults, UserText
from conversations.models import Message, Thread
from tests.assistant.conftest import Clock
from tests.fakes.scripted import ScriptedClient, call, say


def user(size=10):
    return WindowItem(size, start=True)


def reply(size=10):
    return WindowItem(size, start=False)


def result(size=10):
    return WindowItem(size, start=False, counts=False)


def test_everything_is_sent_while_it_fits():
    items = [user(), reply(), user(), reply()]
    assert window_start(items, max_bytes=40, min_messages=2) == 0


def test_the_most_recent_messages_that_fit_starting_where_the_person_speaks():
    items = [user(), reply(), user(), reply(), user(), reply()]
    # 30 bytes would fit from index 3 (a reply): the window starts at the next person's text instead.
    assert window_start(items, max_bytes=30, min_messages=1) == 4


def test_never_fewer_than_the_last_min_messages_even_over_the_bound():
    items = [user(100), reply(100), user(100), reply(100), user(100), reply(100)]
    assert window_start(items, max_bytes=50, min_messages=3) == 2
    assert window_start(items, max_bytes=50, min_messages=2) == 4


def test_a_tool_result_never_travels_without_its_call_and_does_not_count_as_a_message():
    items = [user(), reply(), result(500), reply(), user(), reply(), result(), reply()]
    start = window_start(items, max_bytes=100, min_messages=3)
    assert start == 4
    # The call (a reply) and its result are one stored message: 3 messages from index 4.
    assert window_start(items, max_bytes=10, min_messages=4) == 0


def test_fewer_messages_than_the_minimum_sends_everything_from_the_first_start():
    assert window_start([reply(), user(), reply()], max_bytes=1, min_messages=20) == 1
    assert window_start([], max_bytes=1, min_messages=20) == 0
    assert window_start([reply(), result()], max_bytes=1, min_messages=20) == 0


kinds = st.sampled_from(["user", "reply", "call"])


@given(st.lists(st.tuples(kinds, st.integers(0, 300)), max_size=60), st.integers(1, 3000), st.integers(1, 25))
def test_the_window_is_valid_for_any_history(shape, max_bytes, min_messages):
    items = []
    for kind, size in shape:
        if kind == "user":
            items.append(user(size))
        elif kind == "reply":
            items.append(reply(size))
        else:
            items.extend([reply(size), result(size)])
    start = window_start(items, max_bytes=max_bytes, min_messages=min_messages)
    window = items[start:]
    starts = [i for i, item in enumerate(items) if item.start]
    if not starts:
        assert start == 0
        return
    assert items[start].start  # never a result without its call, never a reply without its request
    messages = sum(item.counts for item in window)
    total_from_first = sum(item.counts for item in items[starts[0]:])
    assert messages >= min(min_messages, total_from_first)
    if sum(item.size for item in window) > max_bytes:
        # Over the bound only to keep the minimum: one start later would drop below it.
        later = [i for i in starts if i > start]
        assert not later or sum(item.counts for item in items[later[0]:]) < min_messages
    else:
        # Nothing more could have been sent within the bound.
        earlier = [i for i in starts if i < start]
        assert not earlier or sum(item.size for item in items[earlier[-1]:]) > max_bytes


# --- The hooks: the loop and chat_submit --------------------------------------------


def long_thread(person, *, continuous: bool, turns: int) -> Thread:
    """A conversation of `turns` exchanges, each with a tool call and its result."""
    thread = Thread.objects.create(
        organization=person.organization, user=person.user, created_at=person.organization.created_at,
        updated_at=person.organization.created_at, last_activity_at=person.organization.created_at,
        surface="telegram" if continuous else "", continuous=continuous,
    )
    for number in range(turns):
        first = submitted_turn(person, thread, f"Question {number}: " + "x" * 100)
        run_turn(first, client=ScriptedClient(call(("search_notes", {"query": "x"})), say(f"Answer {number}")),
                 clock=Clock())
    return thread


def submitted_turn(person, thread, text):
    return chat_submit(person.member, message=text, conversation_id=thread.id).turn_id


@pytest.fixture
def small_bound(settings, owner):
    """The seeds' bound under the organization's "full" choice (a continuous conversation then uses the window)."""
    settings.ASSISTANT_HISTORY_BYTES = 1000
    settings.HISTORY_WINDOW = 20
    choose_history_mode(owner, "full")
    return settings


def choose_history_mode(person, mode):
    Organization.objects.filter(pk=person.organization.pk).update(history_mode=mode)


def browser_thread_over_the_bound(person, settings) -> Thread:
    """Built under a large bound, then the bound shrinks under it."""
    settings.ASSISTANT_HISTORY_BYTES = 700_000
    thread = long_thread(person, continuous=False, turns=12)
    settings.ASSISTANT_HISTORY_BYTES = 1000
    return thread


def test_a_continuous_conversation_over_the_bound_sends_its_window(owner, small_bound):
    thread = long_thread(owner, continuous=True, turns=12)
    client = ScriptedClient(say("Still here."))
    turn_id = submitted_turn(owner, thread, "One more")
    run_turn(turn_id, client=client, clock=Clock())
    assert Turn.objects.get(id=turn_id).status == "done"
    history = client.requests[0].history
    assert isinstance(history[0], UserText) and history[-1] == UserText("One more")
    # At least the last 20 messages (a call and its result are one message), older ones left out.
    assert sum(not isinstance(item, ToolResults) for item in history) >= 20
    assert not any("Question 0:" in getattr(item, "text", "") for item in history)
    for index, item in enumerate(history):
        if isinstance(item, AssistantReply) and item.tool_uses:
            assert isinstance(history[index + 1], ToolResults)
            assert [r.tool_use_id for r in history[index + 1].results] == [u.id for u in item.tool_uses]
    # Everything stays stored.
    assert Message.objects.filter(thread=thread, content__startswith="Question 0:").exists()


def test_a_browser_conversation_over_the_bound_is_still_full(owner, small_bound):
    thread = browser_thread_over_the_bound(owner, small_bound)
    with pytest.raises(ConversationFull):
        chat_submit(owner.member, message="One more", conversation_id=thread.id)


def test_a_browser_conversation_uses_the_window_when_the_organization_chooses_it(owner, small_bound):
    thread = browser_thread_over_the_bound(owner, small_bound)
    choose_history_mode(owner, "window")
    turn_id = submitted_turn(owner, thread, "One more")
    run_turn(turn_id, client=ScriptedClient(say("Fine.")), clock=Clock())
    assert Turn.objects.get(id=turn_id).status == "done"

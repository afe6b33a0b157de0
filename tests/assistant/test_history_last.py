"""Issue 34.12: the chlova seed's window, "the last HISTORY_WINDOW (20) messages
are replayed to the model" (its docs/conversations.md), as an organization's
choice ("last"): the pure functions (assistant/history_window.py,
assistant/history_fit.py), exhaustively over generated conversations."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assistant.history_fit import EARLIER_LEFT_OUT, HistoryTooLong, fit_last, sent_from, suffix_tokens
from assistant.history_window import last_messages_start
from assistant_engine.providers.clients.base import AssistantReply, ToolResult, ToolResults, ToolUse, UserText


def test_the_last_messages_before_the_turn_then_the_turn():
    # Messages begin at 0..9 (10 is the turn's, the person's new message).
    assert last_messages_start(list(range(11)), turn_start=10, count=4) == 6
    assert last_messages_start(list(range(11)), turn_start=10, count=10) == 0
    assert last_messages_start(list(range(11)), turn_start=10, count=20) == 0
    assert last_messages_start([], turn_start=0, count=20) == 0


def test_a_tool_result_is_part_of_its_calls_message():
    # user, reply with a call (1) and its result (2), reply, user (the turn)
    assert last_messages_start([0, 1, 3, 4], turn_start=4, count=2) == 1
    assert last_messages_start([0, 1, 3, 4], turn_start=4, count=1) == 3


def test_the_turn_is_sent_whole_however_many_steps_it_has():
    # The turn begins at 5; its steps (6..30) are never counted against the window.
    messages = [0, 1, 2, 3, 4, *range(5, 31)]
    assert last_messages_start(messages, turn_start=5, count=2) == 3


def test_a_request_that_begins_on_the_assistants_message_opens_on_the_persons_side():
    items = [UserText("a"), AssistantReply("b"), UserText("c")]
    assert sent_from(items, 1) == [EARLIER_LEFT_OUT, AssistantReply("b"), UserText("c")]
    assert sent_from(items, 2) == [UserText("c")]
    assert sent_from([AssistantReply("b"), UserText("c")], 0) == [AssistantReply("b"), UserText("c")]


def test_twenty_messages_that_do_not_fit_the_model_start_later_where_the_person_speaks():
    items = [UserText("x" * 1000), AssistantReply("y" * 1000), UserText("z" * 10), AssistantReply("w" * 10),
             UserText("now")]
    assert fit_last(items, messages=[0, 1, 2, 3, 4], starts=[0, 2, 4], turn_start=4, count=20,
                    room=10_000).start == 0
    assert fit_last(items, messages=[0, 1, 2, 3, 4], starts=[0, 2, 4], turn_start=4, count=20,
                    room=400).start == 2
    with pytest.raises(HistoryTooLong):
        fit_last(items, messages=[0, 1, 2, 3, 4], starts=[0, 2, 4], turn_start=4, count=20, room=5)


texts = st.text(alphabet="abc é", max_size=40)


@st.composite
def conversations(draw):
    """(items, messages, starts, turn_start): exchanges of the person's text and
    replies (some with tool calls and their results), then the current turn."""
    items, messages = [], []
    for number in range(draw(st.integers(0, 40))):
        messages.append(len(items))
        items.append(UserText(draw(texts)))
        for step in range(draw(st.integers(0, 3))):
            use = ToolUse(f"t{number}_{step}", "search_notes", {"query": draw(texts)})
            messages.append(len(items))
            items += [AssistantReply("", (use,)), ToolResults((ToolResult(use.id, draw(texts)),))]
        messages.append(len(items))
        items.append(AssistantReply(draw(texts) or "ok"))
    turn_start = len(items)
    messages.append(turn_start)
    items.append(UserText(draw(texts)))
    starts = [index for index, item in enumerate(items) if isinstance(item, UserText)]
    return items, messages, starts, turn_start


@given(conversations(), st.integers(1, 25))
def test_exactly_the_last_count_messages_never_a_result_without_its_call(conversation, count):
    items, messages, starts, turn_start = conversation
    start = fit_last(items, messages=messages, starts=starts, turn_start=turn_start, count=count,
                     room=10**9).start
    before = [index for index in messages if start <= index < turn_start]
    assert len(before) == min(count, len([index for index in messages if index < turn_start]))
    sent = sent_from(items, start)
    assert isinstance(sent[0], UserText)  # opens on the person's side
    uses = {use.id for item in sent if isinstance(item, AssistantReply) for use in item.tool_uses}
    results = {result.tool_use_id for item in sent if isinstance(item, ToolResults) for result in item.results}
    assert uses == results
    assert sent[-1] == items[-1]  # the turn itself, whole


@given(conversations(), st.integers(1, 25), st.integers(10, 3_000))
def test_what_is_sent_fits_the_room_or_the_turn_alone_does_not(conversation, count, room):
    items, messages, starts, turn_start = conversation
    try:
        start = fit_last(items, messages=messages, starts=starts, turn_start=turn_start, count=count,
                         room=room).start
    except HistoryTooLong:
        assert suffix_tokens(items)[turn_start] > room
        return
    assert start <= turn_start
    assert suffix_tokens(sent_from(items, start))[0] <= room

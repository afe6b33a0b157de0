"""What a request sends of a conversation (assistant/history_fit.py), the pure
functions checked over generated conversations: whatever is sent fits the
room, begins where someone speaks, and a fold never takes the current turn."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assistant.history_fit import (
    ConversationFull,
    HistoryTooLong,
    fit_full,
    fit_summarized,
    fit_window,
    suffix_tokens,
)
from assistant_engine.providers.clients.base import AssistantReply, ToolResult, ToolResults, ToolUse, UserText

texts = st.text(alphabet=st.characters(codec="utf-8"), max_size=300)


@st.composite
def conversations(draw):
    """Exchanges: the person's text, then a reply, sometimes with a tool call and its result."""
    items = []
    for number in range(draw(st.integers(1, 30))):
        items.append(UserText(draw(texts)))
        if draw(st.booleans()):
            use = ToolUse(f"t{number}", "search_notes", {"query": draw(texts)})
            items += [AssistantReply("", (use,)), ToolResults((ToolResult(use.id, draw(texts)),))]
        items.append(AssistantReply(draw(texts)))
    return items


def starts_of(items):
    return [index for index, item in enumerate(items) if isinstance(item, UserText)]


@given(conversations(), st.integers(100, 20_000))
def test_what_is_sent_after_a_fold_fits_and_begins_where_the_person_speaks(items, room):
    starts = starts_of(items)
    latest = starts[-1]
    try:
        fit = fit_summarized(items, starts=starts, first=0, latest=latest, room=room)
    except HistoryTooLong:
        assert suffix_tokens(items)[latest] > room * 0.5  # only when the current turn itself leaves no room
        return
    if not fit.fold:
        assert fit.start == 0 and suffix_tokens(items)[0] <= room
        return
    assert fit.start in starts and 0 < fit.start <= latest
    assert suffix_tokens(items)[fit.start] <= room * 0.7  # a quarter of the room at least for the summary


@given(conversations(), st.integers(100, 20_000), st.integers(1, 30))
def test_the_window_fits_the_room_and_begins_where_the_person_speaks(items, room, min_messages):
    try:
        fit = fit_window(items, room=room, max_bytes=10**9, min_messages=min_messages)
    except HistoryTooLong:
        assert suffix_tokens(items)[starts_of(items)[-1]] > room
        return
    assert suffix_tokens(items)[fit.start] <= room and isinstance(items[fit.start], UserText)


def test_full_is_full_past_the_room():
    items = [UserText("x" * 500)]
    assert fit_full(items, room=1_000).start == 0
    with pytest.raises(ConversationFull):
        fit_full(items, room=500)


def test_a_fold_never_passes_the_latest_place_it_may_go():
    items = [UserText("a" * 400), AssistantReply("b" * 400), UserText("c" * 400), AssistantReply("d" * 400),
             UserText("e" * 10)]
    # Room for the last exchange only: without a bound the fold would keep [4:]; the bound says at most 2.
    fit = fit_summarized(items, starts=[0, 2, 4], first=0, latest=2, room=1_500)
    assert fit.fold and fit.start == 2

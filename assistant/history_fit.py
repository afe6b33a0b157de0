"""What a request sends of a conversation, within its model's window: pure,
no Django.

The request's other parts (system prompt, tool specifications, the reply's
output) are measured first; the history gets the rest (`room`, in tokens, by
the bound of assistant_engine.providers.windows). What happens when the history
does not fit is the organization's choice (Organization.HistoryMode):

- summarize: the oldest messages are folded into the summary (the loop has the
  model write it: assistant/turn/summarize.py), keeping about half the room for
  the messages sent whole, so the next summary comes many turns later;
- window: the most recent messages that fit (at least HISTORY_WINDOW while
  they fit), as the chlova seed did for Telegram;
- full: everything until the conversation is full (the hgdc seed);
- last: the chlova seed's: the last HISTORY_WINDOW messages before the current
  turn (the person's and the assistant's, each with its tool calls and their
  results), then the turn, whatever their bytes.

What is sent may begin only where the person (or the application) speaks, so a
tool call always travels with its result, and never after the start of the
current turn, nor past a pending card's proposal. Under "last" it may begin on
an assistant's message (the seed counts messages, not exchanges): the request
then opens with a line of ours on the person's side (EARLIER_LEFT_OUT), as the
providers expect a conversation to.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass

from assistant.history_window import WindowItem, last_messages_start, window_start
from assistant_engine.providers.clients.base import AssistantReply, HistoryItem, ToolResults, UserText
from assistant_engine.providers.windows import FRAMING_TOKENS_PER_PART

# The share of the room the messages sent whole keep after a summary; at most
# FOLD_AT_MOST when the turn (or a pending card) leaves no earlier place to
# start, a summary of at most a quarter of the room beside them.
KEEP_SHARE = 0.5
FOLD_AT_MOST = 0.7


# What opens a request whose history begins on the assistant's message (see the module's docstring).
EARLIER_LEFT_OUT = UserText("(The earlier messages of this conversation are not sent.)")


class HistoryTooLong(Exception):
    """Even the current turn alone does not fit the model's window."""


class ConversationFull(Exception):
    """Under "full", the conversation has reached its bound."""


@dataclass(frozen=True)
class Fit:
    """`start`: the index of the first item sent whole; `fold`: when a summary
    must first take the items before it (from `fold_from`, after the current
    summary)."""

    start: int
    fold: bool = False


def history_parts(items: list[HistoryItem]) -> int:
    count = 0
    for item in items:
        if isinstance(item, AssistantReply):
            count += 1 + len(item.tool_uses)
        elif isinstance(item, ToolResults):
            count += 1 + len(item.results)
        else:
            count += 1 + len(item.files)
    return count


def history_bytes(items: list[HistoryItem]) -> int:
    """The size of what would be sent, in UTF-8 bytes of its text."""
    total = 0
    for item in items:
        if isinstance(item, UserText):
            total += len(item.text.encode()) + sum(part.model_bytes for part in item.files)
        elif isinstance(item, AssistantReply):
            total += len(item.text.encode())
            total += sum(len(json.dumps(use.input, ensure_ascii=False).encode()) for use in item.tool_uses)
        else:
            total += sum(len(result.content.encode()) for result in item.results)
    return total


def item_tokens(item: HistoryItem) -> int:
    """An item's bound in tokens: its bytes, and its framing."""
    return history_bytes([item]) + FRAMING_TOKENS_PER_PART * history_parts([item])


def suffix_tokens(items: Sequence[HistoryItem]) -> list[int]:
    """suffix[i]: the tokens of items[i:] (suffix[len(items)] is 0)."""
    suffix = [0] * (len(items) + 1)
    for index in range(len(items) - 1, -1, -1):
        suffix[index] = suffix[index + 1] + item_tokens(items[index])
    return suffix


def fit_summarized(items: Sequence[HistoryItem], *, starts: Sequence[int], first: int, latest: int,
                   room: int) -> Fit:
    """Under "summarize". `starts`: where what is sent may begin (indexes, in
    order); `first`: the first item after the summary (0 without one);
    `latest`: the last index a summary may fold up to (the current turn's
    first message, or a pending card's). All fits: Fit(first). Otherwise the
    earliest start whose suffix takes at most KEEP_SHARE of the room (the
    summary gets the rest), never after `latest`."""
    suffix = suffix_tokens(items)
    if suffix[0] <= room:
        return Fit(first)
    allowed = [start for start in starts if first < start <= latest]
    if not allowed:
        raise HistoryTooLong
    keep = next((start for start in allowed if suffix[start] <= room * KEEP_SHARE), allowed[-1])
    if suffix[keep] > room * FOLD_AT_MOST:  # no room left for a summary beside it
        raise HistoryTooLong
    return Fit(keep, fold=True)


def fit_window(items: Sequence[HistoryItem], *, room: int, max_bytes: int, min_messages: int) -> Fit:
    """Under "window" (and a continuous conversation under "full"): the most
    recent items that fit `max_bytes` (ASSISTANT_HISTORY_BYTES), at least
    `min_messages` (the seeds' window), and in any case the model's room."""
    window = [WindowItem(history_bytes([item]), isinstance(item, UserText), not isinstance(item, ToolResults))
              for item in items]
    start = window_start(window, max_bytes=max_bytes, min_messages=min_messages)
    suffix = suffix_tokens(items)
    if suffix[start] <= room:
        return Fit(start)
    fitting = [index for index, item in enumerate(window) if item.start and index > start and suffix[index] <= room]
    if not fitting:
        raise HistoryTooLong
    return Fit(fitting[0])


def fit_full(items: Sequence[HistoryItem], *, room: int) -> Fit:
    if suffix_tokens(items)[0] > room:
        raise ConversationFull
    return Fit(0)


def sent_from(items: Sequence[HistoryItem], start: int) -> list[HistoryItem]:
    """What is sent of the history from `start` on: opened on the person's side
    when it begins after the conversation's start on the assistant's message."""
    sent = list(items[start:])
    if start and sent and not isinstance(sent[0], UserText):
        return [EARLIER_LEFT_OUT, *sent]
    return sent


def fit_last(items: Sequence[HistoryItem], *, messages: Sequence[int], starts: Sequence[int], turn_start: int,
             count: int, room: int) -> Fit:
    """Under "last": the `count` messages before the current turn and the turn
    (last_messages_start). Should they not fit the model's room, from the
    first place after that where the person speaks whose rest fits, never
    after the turn's start."""
    start = last_messages_start(messages, turn_start=turn_start, count=count)
    suffix = suffix_tokens(items)
    opens_on_a_reply = 0 < start < len(items) and not isinstance(items[start], UserText)
    opening = item_tokens(EARLIER_LEFT_OUT) if opens_on_a_reply else 0
    if suffix[start] + opening <= room:
        return Fit(start)
    fitting = [index for index in starts if start < index <= turn_start and suffix[index] <= room]
    if not fitting:
        raise HistoryTooLong
    return Fit(fitting[0])

"""The context window of a continuous conversation (Telegram), and the chlova
seed's "last messages" window: pure, no Django.

A continuous conversation never becomes "full". The model gets the most recent
messages that fit the history bound, and never fewer than the last
`min_messages` (even when those alone are over the bound: a reply is better
than a refusal the person can't act on). The window only starts where the
person speaks (a `start`): never on a tool result without its call, nor on an
assistant reply cut from the request that prompted it, so a tool call always
travels with its result.
"""

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class WindowItem:
    size: int  # bytes this item adds to the request
    start: bool  # the window may begin here (the person's text)
    counts: bool = True  # one stored message (a tool result belongs to its call's message)


def window_start(items: Sequence[WindowItem], *, max_bytes: int, min_messages: int) -> int:
    """Index of the first item the model gets."""
    starts = [index for index, item in enumerate(items) if item.start]
    if not starts:
        return 0
    suffix_bytes, suffix_messages = _suffix_totals(items)
    fitting = next((i for i in starts if suffix_bytes[i] <= max_bytes), None)
    enough = [i for i in starts if suffix_messages[i] >= min_messages]
    # The latest start that still keeps `min_messages`; with fewer messages
    # than that in all, everything from the first start.
    floor = enough[-1] if enough else starts[0]
    if fitting is not None and fitting <= floor:
        return fitting
    return floor


def _suffix_totals(items: Sequence[WindowItem]) -> tuple[list[int], list[int]]:
    sizes, messages = [0] * (len(items) + 1), [0] * (len(items) + 1)
    for index in range(len(items) - 1, -1, -1):
        sizes[index] = sizes[index + 1] + items[index].size
        messages[index] = messages[index + 1] + (1 if items[index].counts else 0)
    return sizes, messages


def last_messages_start(messages: Sequence[int], *, turn_start: int, count: int) -> int:
    """Under an organization's "last" choice (the chlova seed's window: its
    HISTORY_WINDOW last messages are replayed, then the new one): the index of
    the first item sent. `messages`: where each of the person's and the
    assistant's messages begins, in order (a tool call's result belongs to its
    call's message, so the two are never parted); `turn_start`: where the
    current turn begins. The `count` messages before the turn are sent, then
    the turn whole; with no more than `count` before it, everything."""
    before = [index for index in messages if index < turn_start]
    if len(before) <= count:
        return 0
    return before[-count]

"""Versions the person pages through ("‹ 2 / 3 ›"), from the stored data: pure
shaping of the presenters' blocks, no database access, no Django import.

How the stored data is shaped (assistant.chat._redo): a regenerated reply is
marked superseded and the new reply follows it, after the same user message;
an edited message is marked superseded with everything that followed it, and
the new message (`replaces` naming the old one) follows with its own reply.
So the page shows:

- a **reply set** where one user message has several replies: each
  superseded reply is one version, the current reply (all its blocks) the
  newest;
- a **message set** where a message was edited: each version is the message
  *with the replies that followed it* (themselves a reply set when they were
  regenerated), as ChatGPT and LibreChat page an edited message.

The newest version is shown; the others are rendered hidden and the page's
script pages through them. Lines "The assistant was told…" (events) are facts
the model was given and are never superseded: they are kept out of the sets,
before a set (told with its newest version) or after it (told with the next
message), so paging never hides one.

The template gets one flat list: the blocks, with `Marker`s (role "marker")
between them that open and close a set, open and close a version, and place
a version's pager (after the message of a message set, at the end of a reply).
"""

from dataclasses import dataclass
from typing import Protocol


class BlockLike(Protocol):
    role: str
    superseded: bool
    superseded_at: object  # a datetime, or None for the current version
    replaces: str
    parts: list
    paged: bool  # set here: in a set, the pager says which version it is


@dataclass(frozen=True)
class Marker:
    kind: str  # "open_set", "close_set", "open_version", "close_version", "pager"
    of: str = ""  # "reply" or "message": what the set's versions are
    number: int = 0  # this version, from 1 (oldest)
    count: int = 0  # versions in the set
    key: str = ""  # the set's first message id: the script keeps the version chosen across refreshes
    awaiting: bool = False  # a reply set whose newest version is still being written (regenerated)
    role: str = "marker"

    @property
    def shown(self) -> bool:
        """The newest version is shown; a set still awaiting its newest shows its latest."""
        return self.number == self.count


@dataclass
class _Exchange:
    """A user message and what followed it, up to the next user message."""

    user: BlockLike
    inner: list  # up to and including the last reply
    tail: list  # after the last reply: told to the model with the next message

    @property
    def replies(self) -> list:
        return [block for block in self.inner if block.role == "assistant"]

    @property
    def loose(self) -> list:
        """The events (and free text) among the replies: kept out of the sets."""
        return [block for block in self.inner if block.role != "assistant"]


def arrange(blocks: list) -> list:
    """The blocks in page order with the markers of their version sets."""
    prelude, exchanges = _exchanges(blocks)
    items: list = list(prelude)
    for group in _edit_groups(exchanges):
        if len(group) == 1:
            items += _exchange_items(group[0])
        else:
            items += _message_set(group)
    return items


def _exchanges(blocks: list) -> tuple[list, list[_Exchange]]:
    prelude: list = []
    exchanges: list[_Exchange] = []
    following: list = prelude
    for block in blocks:
        if block.role == "user":
            exchanges.append(_Exchange(block, [], []))
            following = exchanges[-1].inner
        else:
            following.append(block)
    for exchange in exchanges:
        last_reply = max((i for i, b in enumerate(exchange.inner) if b.role == "assistant"), default=-1)
        exchange.inner, exchange.tail = exchange.inner[: last_reply + 1], exchange.inner[last_reply + 1 :]
    if exchanges and _awaiting(exchanges[-1]):
        # A regenerate still being written: what it told the model comes after
        # the old reply for now, but belongs before the set, where it stays.
        last = exchanges[-1]
        last.inner, last.tail = last.inner + last.tail, []
    return prelude, exchanges


def _current_replies(exchange: _Exchange) -> list:
    """The message's own reply shares its state: current with a current message,
    superseded at the same moment as an edited one (the edit superseded both
    at once); a reply superseded before that was regenerated."""
    return [reply for reply in exchange.replies if reply.superseded_at == exchange.user.superseded_at]


def _awaiting(exchange: _Exchange) -> bool:
    """The current message's reply was regenerated and the new one has no message yet."""
    return exchange.user.superseded_at is None and bool(exchange.replies) and not _current_replies(exchange)


def _edit_groups(exchanges: list[_Exchange]) -> list[list[_Exchange]]:
    """Consecutive exchanges whose message `replaces` the one before: one message set."""
    groups: list[list[_Exchange]] = []
    for exchange in exchanges:
        previous = groups[-1][-1].user if groups else None
        if previous is not None and exchange.user.replaces and exchange.user.replaces == _message_id(previous):
            groups[-1].append(exchange)
        else:
            groups.append([exchange])
    return groups


def _message_id(block: BlockLike) -> str:
    return block.parts[0].id if block.parts else ""


def _exchange_items(exchange: _Exchange) -> list:
    return [exchange.user, *exchange.loose, *_replies(exchange), *exchange.tail]


def _replies(exchange: _Exchange) -> list:
    """The replies to one message: a reply set when some were regenerated."""
    current = _current_replies(exchange)
    previous = [reply for reply in exchange.replies if reply.superseded_at != exchange.user.superseded_at]
    if not previous:
        return current
    versions = [[reply] for reply in previous] + ([current] if current else [])
    key = _message_id(versions[0][0])
    return _set("reply", versions, key=key, awaiting=_awaiting(exchange), pager_at_end=True)


def _message_set(group: list[_Exchange]) -> list:
    """An edited message: each version is the message with the replies that followed it."""
    loose = [block for exchange in group for block in exchange.loose]
    loose += [block for exchange in group[:-1] for block in exchange.tail]
    versions = [[exchange.user, *_replies(exchange)] for exchange in group]
    items = _set("message", versions, key=_message_id(group[0].user), awaiting=False, pager_at_end=False)
    return [*loose, *items, *group[-1].tail]


def _set(of: str, versions: list[list], *, key: str, awaiting: bool, pager_at_end: bool) -> list:
    """`versions`, oldest first, each a list of items; the pager goes after
    the version's first item (its message) or at its end (a reply)."""
    count = len(versions)
    for version in versions:
        for item in version:
            if not isinstance(item, Marker):
                item.paged = True
    items: list = [Marker("open_set", of=of, count=count, key=key, awaiting=awaiting)]
    for number, version in enumerate(versions, start=1):
        pager = Marker("pager", of=of, number=number, count=count)
        body = [*version, pager] if pager_at_end else [version[0], pager, *version[1:]]
        items += [Marker("open_version", of=of, number=number, count=count), *body, Marker("close_version")]
    items.append(Marker("close_set"))
    return items

"""What a running turn has written so far, as a sequence of progress events.

The database is the truth: `turn_events` reads what the worker wrote (on
connection, after a gap, at the end). With Redis, the worker also publishes
each step (`assistant.live`) and `apply_published` turns a publication into
the same events without a query. Both advance one `Cursor`, which is also each
event's id, so a client that reconnects with `Last-Event-ID` resumes exactly.
"""

import json
import re
from dataclasses import dataclass
from typing import NamedTuple
from uuid import UUID

from assistant.card_presentation import present
from assistant.models import ENDED_STATUSES, ActionCard, Turn
from assistant_engine.tools.framework import ToolError, is_proposal
from assistant_engine.tools.model_text import bound_for_model
from assistant_engine.tools.registry import get_tool
from conversations.models import Message, ToolCall

PREVIEW_CHARS = 2000


class Event(NamedTuple):
    name: str
    data: dict
    id: str  # the cursor once this event is sent (Last-Event-ID)


class BadCursor(ValueError):
    """A Last-Event-ID that is not one of ours."""


_CURSOR = re.compile(r"^(-1|\d{1,10})\.(\d{1,10})\.(\d{1,6})\.(\d{1,6})\.(\d{1,6})$")


@dataclass
class Cursor:
    """What a client was sent, as a watermark. A worker writes a turn in order
    (a reply's text, then its tool calls one by one, then the next reply), so
    five numbers say it all: every assistant message before `seq` was sent
    whole; of message `seq`, the first `text` characters and the first
    `started` / `finished` tool calls (by position); and the turn's first
    `cards` cards (by creation)."""

    seq: int = -1
    text: int = 0
    started: int = 0
    finished: int = 0
    cards: int = 0

    def encode(self) -> str:
        return f"{self.seq}.{self.text}.{self.started}.{self.finished}.{self.cards}"

    @classmethod
    def decode(cls, raw: str) -> "Cursor":
        match = _CURSOR.match(raw.strip())
        if match is None:
            raise BadCursor(raw)
        return cls(*(int(part) for part in match.groups()))

    def enter_message(self, seq: int) -> None:
        self.seq, self.text, self.started, self.finished = seq, 0, 0, 0


# --- From the database (catch-up) ------------------------------------------------


def turn_events(turn_id: UUID, cursor: Cursor) -> tuple[list[Event], bool]:
    """Events not yet sent (the cursor advances), and whether the turn has ended.
    Four queries, whatever the turn's size."""
    turn = Turn.objects.only("status", "failure_kind", "steps", "cost_micros").get(id=turn_id)
    messages = list(Message.objects.filter(turn_id=turn_id, role=Message.Role.ASSISTANT).order_by("seq"))
    calls_by_message: dict[UUID, list[ToolCall]] = {}
    for call in ToolCall.objects.filter(message__turn_id=turn_id).order_by("position"):
        calls_by_message.setdefault(call.message_id, []).append(call)
    events: list[Event] = []
    for message in messages:
        if message.seq >= cursor.seq:
            events.extend(_message_events(message, calls_by_message.get(message.id, []), cursor))
    cards = ActionCard.objects.filter(turn_id=turn_id).select_related("tool_call").order_by("created_at", "id")
    for card in list(cards)[cursor.cards:]:
        cursor.cards += 1
        events.append(Event("card_proposed", card_json(card), cursor.encode()))
    ended = turn.status in ENDED_STATUSES
    if ended:
        notice = next((m.notice for m in reversed(messages) if m.notice), "")
        events.append(Event("turn_ended", turn_ended_json(turn, notice), cursor.encode()))
    return events, ended


def _message_events(message: Message, calls: list[ToolCall], cursor: Cursor) -> list[Event]:
    """A reply's text, then its tool calls: the order in which they happened."""
    events = []
    if message.seq > cursor.seq:
        cursor.enter_message(message.seq)
        events.append(Event("message_started", {"messageId": str(message.id), "seq": message.seq}, cursor.encode()))
    if len(message.content) > cursor.text:
        delta = message.content[cursor.text:]
        cursor.text = len(message.content)
        events.append(Event("text", {"messageId": str(message.id), "delta": delta}, cursor.encode()))
    for call in calls:
        if call.position >= cursor.started:
            cursor.started = call.position + 1
            events.append(Event("tool_call_started", tool_call_started_json(call), cursor.encode()))
        if call.finished_at is not None and call.position >= cursor.finished:
            cursor.finished = call.position + 1
            events.append(Event("tool_call_finished", tool_call_finished_json(call), cursor.encode()))
    return events


# --- From a publication (no query) -------------------------------------------------


def apply_published(cursor: Cursor, published: dict) -> list[Event] | None:
    """The events a worker's publication (assistant.live) adds for this client,
    or None when it does not follow on from the cursor (something was missed:
    read the database). Repeats of what was sent already give no event."""
    kind = published.get("kind")
    if kind == "card_proposed":
        return _published_card(cursor, published)
    if kind not in _MESSAGE_STEPS:
        return None  # the end (or unknown): the database says how it ended
    seq = published["seq"]
    if seq < cursor.seq:
        return []  # an earlier reply, sent whole already
    entered = seq > cursor.seq
    if entered and published.get("offset", published.get("position")) != 0:
        return None  # a new reply seen from its middle: its start was missed
    before = Cursor(**vars(cursor))
    events: list[Event] = []
    if entered:
        cursor.enter_message(seq)
        events.append(Event("message_started", {"messageId": published["messageId"], "seq": seq}, cursor.encode()))
    more = _MESSAGE_STEPS[kind](cursor, published)
    if more is None:
        vars(cursor).update(vars(before))
        return None
    return events + more


def _published_text(cursor: Cursor, published: dict) -> list[Event] | None:
    offset, delta = published["offset"], published["delta"]
    if offset > cursor.text:
        return None
    fresh = delta[cursor.text - offset:]
    if not fresh:
        return []
    cursor.text += len(fresh)
    data = {"messageId": published["messageId"], "delta": fresh, "at": published["at"]}
    return [Event("text", data, cursor.encode())]


def _published_start(cursor: Cursor, published: dict) -> list[Event] | None:
    position = published["position"]
    if position > cursor.started:
        return None
    if position < cursor.started:
        return []
    cursor.started += 1
    return [Event("tool_call_started", published["call"], cursor.encode())]


def _published_finish(cursor: Cursor, published: dict) -> list[Event] | None:
    position = published["position"]
    if position > cursor.finished or position >= cursor.started:
        return None
    if position < cursor.finished:
        return []
    cursor.finished += 1
    return [Event("tool_call_finished", published["call"], cursor.encode())]


def _published_card(cursor: Cursor, published: dict) -> list[Event] | None:
    index = published["index"]
    if index > cursor.cards:
        return None
    if index < cursor.cards:
        return []
    cursor.cards += 1
    return [Event("card_proposed", published["card"], cursor.encode())]


_MESSAGE_STEPS = {
    "text": _published_text, "tool_call_started": _published_start, "tool_call_finished": _published_finish,
}


# --- The events' data (one shape for both sources) ------------------------------------


def tool_call_started_json(call: ToolCall) -> dict:
    return {"messageId": str(call.message_id), "toolCallId": call.tool_use_id, "name": call.name, "input": call.input}


def tool_call_finished_json(call: ToolCall) -> dict:
    finished = {
        "messageId": str(call.message_id), "toolCallId": call.tool_use_id, "name": call.name,
        "isError": call.is_error,
        "resultPreview": bound_for_model(json.dumps(call.result, ensure_ascii=False), PREVIEW_CHARS),
    }
    effect = _effect(call)
    if effect is not None:
        finished["effect"] = effect
    return finished


def _effect(call: ToolCall) -> dict | None:
    """What a write tool that ran changed (its result, e.g. {id, title}), for the
    page around the assistant to follow, as a confirmed card's (issue 34.2);
    None for a read, an error, a proposal, a tool no longer declared."""
    try:
        tool = get_tool(call.name)
    except ToolError:
        return None
    if tool.tool_class != "write" or call.is_error or is_proposal(call.result):
        return None
    return call.result if isinstance(call.result, dict) else {}


def turn_ended_json(turn: Turn, notice: str) -> dict:
    return {
        "turnId": str(turn.id), "status": turn.status, "failureKind": turn.failure_kind or None,
        "notice": notice, "steps": turn.steps, "costMicros": turn.cost_micros,
    }


def card_json(card: ActionCard) -> dict:
    return {
        "id": str(card.id), "toolName": card.tool_name, "input": card.tool_input,
        "description": card.description, "hash": card.snapshot_hash, "status": card.status,
        "trifectaWarning": card.trifecta_warning, "expiresAt": card.expires_at.isoformat(),
        "decidedAt": card.decided_at.isoformat() if card.decided_at else None,
        "result": card.result, "error": card.error or None,
        "toolCallId": card.tool_call.tool_use_id if card.tool_call_id else None,
        "conversationId": str(card.thread_id),
        "identicalDoneAt": card.identical_done_at.isoformat() if card.identical_done_at else None,
        # What to show and in which order (assistant.card_presentation): warnings first.
        "presentation": present(card).as_json(),
    }

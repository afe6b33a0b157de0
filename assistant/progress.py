"""What a running turn has written so far, as a sequence of progress events.

The SSE endpoint polls the database (what the worker writes), so it works
with any number of web and worker processes and no shared memory.
"""

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from uuid import UUID

from assistant.models import ENDED_STATUSES, ActionCard, Turn
from assistant.tools.framework import bound_for_model
from conversations.models import Message, ToolCall

PREVIEW_CHARS = 2000


@dataclass
class ProgressCursor:
    """What has been reported already."""

    text_lengths: dict[UUID, int] = field(default_factory=dict)
    started_calls: set[UUID] = field(default_factory=set)
    finished_calls: set[UUID] = field(default_factory=set)
    cards: set[UUID] = field(default_factory=set)


def turn_events(turn: Turn, cursor: ProgressCursor) -> tuple[list[tuple[str, dict]], bool]:
    """New events since `cursor` (updated in place), and whether the turn has ended."""
    turn.refresh_from_db(fields=["status", "failure_kind", "steps", "cost_micros"])
    events: list[tuple[str, dict]] = []
    messages = list(Message.objects.filter(turn_id=turn.id, role=Message.Role.ASSISTANT).order_by("seq"))
    calls_by_message: dict[UUID, list[ToolCall]] = {}
    for call in ToolCall.objects.filter(message__turn_id=turn.id).order_by("position"):
        calls_by_message.setdefault(call.message_id, []).append(call)
    # Each reply's text, then its tool calls: the order in which they happened.
    for message in messages:
        events.extend(_text_events(message, cursor))
        for call in calls_by_message.get(message.id, []):
            events.extend(_call_events(call, cursor))
    for card in ActionCard.objects.filter(turn_id=turn.id).select_related("tool_call").order_by("created_at"):
        if card.id not in cursor.cards:
            cursor.cards.add(card.id)
            events.append(("card_proposed", card_json(card)))
    ended = turn.status in ENDED_STATUSES
    if ended:
        notice = next((m.notice for m in reversed(messages) if m.notice), "")
        events.append(("turn_ended", {
            "turnId": str(turn.id), "status": turn.status, "failureKind": turn.failure_kind or None,
            "notice": notice, "steps": turn.steps, "costMicros": turn.cost_micros,
        }))
    return events, ended


def _text_events(message: Message, cursor: ProgressCursor) -> list[tuple[str, dict]]:
    sent = cursor.text_lengths.get(message.id)
    events = []
    if sent is None:
        events.append(("message_started", {"messageId": str(message.id), "seq": message.seq}))
        sent = 0
    if len(message.content) > sent:
        events.append(("text", {"messageId": str(message.id), "delta": message.content[sent:]}))
    cursor.text_lengths[message.id] = max(sent, len(message.content))
    return events


def _call_events(call: ToolCall, cursor: ProgressCursor) -> list[tuple[str, dict]]:
    events = []
    if call.id not in cursor.started_calls:
        cursor.started_calls.add(call.id)
        events.append(("tool_call_started", {
            "messageId": str(call.message_id), "toolCallId": call.tool_use_id, "name": call.name,
            "input": call.input,
        }))
    if call.finished_at is not None and call.id not in cursor.finished_calls:
        cursor.finished_calls.add(call.id)
        events.append(("tool_call_finished", {
            "messageId": str(call.message_id), "toolCallId": call.tool_use_id, "name": call.name,
            "isError": call.is_error,
            "resultPreview": bound_for_model(json.dumps(call.result, ensure_ascii=False), PREVIEW_CHARS),
        }))
    return events


def card_json(card: ActionCard) -> dict:
    return {
        "id": str(card.id), "toolName": card.tool_name, "input": card.tool_input,
        "description": card.description, "hash": card.snapshot_hash, "status": card.status,
        "trifectaWarning": card.trifecta_warning, "expiresAt": card.expires_at.isoformat(),
        "decidedAt": card.decided_at.isoformat() if card.decided_at else None,
        "result": card.result, "error": card.error or None,
        "toolCallId": card.tool_call.tool_use_id if card.tool_call_id else None,
        "conversationId": str(card.thread_id),
    }


def stream_turn(
    turn: Turn, *, poll_seconds: float = 0.2, max_seconds: float = 600, heartbeat_seconds: float = 15,
    sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic,
) -> Iterator[tuple[str, dict] | None]:
    """Events until the turn ends; None stands for a heartbeat."""
    cursor = ProgressCursor()
    started = last_sent = clock()
    while clock() - started < max_seconds:
        events, ended = turn_events(turn, cursor)
        yield from events
        if ended:
            return
        if events:
            last_sent = clock()
        elif clock() - last_sent >= heartbeat_seconds:
            last_sent = clock()
            yield None
        sleep(poll_seconds)

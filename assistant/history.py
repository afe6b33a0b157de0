"""The stored conversation as the model sees it.

Everything is sent, in `seq` order: the person's text, the assistant's text and
tool calls, each tool result (bounded for the model; the raw result stays
whole in the database) and application events. Text from the person or from a
tool can't open or close an `<application_events>` block: it is neutralized
here, the one place history is built.
"""

import json
from uuid import UUID

from django.conf import settings
from django.db.models import Prefetch

from assistant.app_events import neutralize
from assistant.clients.base import AssistantReply, HistoryItem, ToolResult, ToolResults, ToolUse, UserText
from assistant.history_window import WindowItem, window_start
from assistant.tools.framework import bound_for_model, result_for_model
from conversations.models import Message, ToolCall

UNFINISHED_CALL = "This tool call did not finish (the turn was interrupted)."


def load_history(thread_id: UUID) -> list[HistoryItem]:
    """Two queries whatever the length of the conversation."""
    messages = (
        Message.objects.filter(thread_id=thread_id)
        .order_by("seq")
        .prefetch_related(Prefetch("tool_calls", queryset=ToolCall.objects.order_by("position")))
    )
    items: list[HistoryItem] = []
    for message in messages:
        items.extend(_items_of(message))
    return items


def _items_of(message: Message) -> list[HistoryItem]:
    if message.role == Message.Role.USER:
        return [UserText(neutralize(message.content))]
    if message.role == Message.Role.EVENT:
        # Only the application's own blocks (marked with the turn that carried
        # them) are live; an `event` written by a client's upsert is inert text.
        return [UserText(message.content if message.turn_id else neutralize(message.content))]
    if message.role == Message.Role.ASSISTANT:
        calls = list(message.tool_calls.all())
        # The model's own words are neutralized too: a client can upsert them,
        # and an injected inbox message could make the model echo a tag.
        reply = AssistantReply(
            text=neutralize(message.content),
            tool_uses=tuple(
                ToolUse(id=c.tool_use_id, name=c.name, input=_as_object(neutralize_json(c.input))) for c in calls
            ),
        )
        if not calls:
            return [reply] if message.content else []
        return [reply, ToolResults(tuple(tool_result_of(call) for call in calls))]
    # Role "tool": free text an offline client stored apart from a call.
    return [UserText(neutralize(message.content))] if message.content else []


def tool_result_of(call: ToolCall) -> ToolResult:
    if call.finished_at is None and call.result is None:
        return ToolResult(call.tool_use_id, UNFINISHED_CALL, is_error=True)
    if call.is_error:
        return ToolResult(call.tool_use_id, neutralize(bound_for_model(error_text(call.result))), is_error=True)
    return ToolResult(call.tool_use_id, neutralize(result_for_model(call.result)))


def error_text(result) -> str:
    if isinstance(result, dict) and isinstance(result.get("error"), str):
        return result["error"]
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def neutralize_json(value):
    """`value` with every string (keys included) neutralized."""
    if isinstance(value, str):
        return neutralize(value)
    if isinstance(value, list):
        return [neutralize_json(item) for item in value]
    if isinstance(value, dict):
        return {neutralize(key): neutralize_json(item) for key, item in value.items()}
    return value


def _as_object(value) -> dict:
    return value if isinstance(value, dict) else {"value": value}


def history_bytes(items: list[HistoryItem]) -> int:
    """The size of what would be sent, in UTF-8 bytes of its text."""
    total = 0
    for item in items:
        if isinstance(item, UserText):
            total += len(item.text.encode())
        elif isinstance(item, AssistantReply):
            total += len(item.text.encode())
            total += sum(len(json.dumps(use.input, ensure_ascii=False).encode()) for use in item.tool_uses)
        else:
            total += sum(len(result.content.encode()) for result in item.results)
    return total


def in_window(items: list[HistoryItem]) -> list[HistoryItem]:
    """What a continuous conversation sends: the most recent items that fit
    ASSISTANT_HISTORY_BYTES, at least the last HISTORY_WINDOW messages
    (assistant.history_window)."""
    start = window_start(
        [WindowItem(history_bytes([item]), isinstance(item, UserText), not isinstance(item, ToolResults))
         for item in items],
        max_bytes=settings.ASSISTANT_HISTORY_BYTES, min_messages=settings.HISTORY_WINDOW,
    )
    return items[start:]


def uses_window(continuous: bool) -> bool:
    """A conversation's history is windowed (never full) when it is continuous
    (Telegram), or everywhere when HISTORY_WINDOW_EVERYWHERE is on."""
    return continuous or settings.HISTORY_WINDOW_EVERYWHERE

"""The stored conversation as the model sees it.

Everything is sent, in `seq` order: the person's text, the assistant's text and
tool calls, each tool result (bounded for the model; the raw result stays
whole in the database) and application events. Text from the person or from a
tool can't open or close an `<application_events>` block: it is neutralized
here, the one place history is built.
"""

import json
from dataclasses import dataclass
from uuid import UUID

from django.conf import settings
from django.db.models import Prefetch

from assistant.app_events import neutralize
from assistant.clients.base import AssistantReply, HistoryItem, ToolResult, ToolResults, ToolUse, UserText
from assistant.history_window import WindowItem, window_start
from assistant.tools.framework import ToolError, bound_for_model, result_for_model, result_marks
from assistant.tools.registry import get_tool
from assistant.trifecta import SeenCall, Taint, context_taint
from conversations.models import Message, ToolCall

UNFINISHED_CALL = "This tool call did not finish (the turn was interrupted)."


@dataclass(frozen=True)
class Context:
    """What the model will be sent, and the taint of the tool results in it."""

    items: list[HistoryItem]
    taint: Taint


def load_history(thread_id: UUID) -> list[HistoryItem]:
    return load_context(thread_id).items


def load_context(thread_id: UUID) -> Context:
    """Two queries whatever the length of the conversation."""
    messages = (
        Message.objects.filter(thread_id=thread_id, superseded_at__isnull=True)  # previous versions: not sent
        .order_by("seq")
        .prefetch_related(Prefetch("tool_calls", queryset=ToolCall.objects.order_by("position")))
    )
    items: list[HistoryItem] = []
    seen: list[SeenCall] = []
    for message in messages:
        items.extend(_items_of(message))
        seen.extend(seen_call(call, vouched=message.turn_id is not None) for call in message.tool_calls.all())
    return Context(items, context_taint(seen))


def seen_call(call: ToolCall, *, vouched: bool) -> SeenCall:
    """The facts the trifecta guard needs about a stored call. `vouched`: the
    loop wrote it (its message carries a turn id no upload can set)."""
    try:
        tool = get_tool(call.name) if vouched else None
    except ToolError:
        tool = None  # a tool not declared today: nobody vouches for what it returned
    if tool is None:
        return SeenCall(flags=None)
    return SeenCall(flags=tool.flags, marks=frozenset() if call.is_error else result_marks(tool, call.result))


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


# Tokens a provider adds around what we send (the tool-use system prompt,
# roles, block markers): generous, so the bound below stays an upper bound.
FRAMING_TOKENS = 1024
# Per message and per tool use or result: role and block markers, the call's
# id and name (not counted in history_bytes).
FRAMING_TOKENS_PER_PART = 64


def request_token_bound(*, system: str, tools_bytes: int, history: list[HistoryItem]) -> int:
    """An upper bound of a request's input tokens: one per UTF-8 byte (a
    byte-level tokenizer never makes a token of less than one byte) plus the
    providers' framing."""
    text_bytes = len(system.encode()) + tools_bytes + history_bytes(history)
    return text_bytes + FRAMING_TOKENS + FRAMING_TOKENS_PER_PART * _parts(history)


def _parts(items: list[HistoryItem]) -> int:
    count = 0
    for item in items:
        if isinstance(item, AssistantReply):
            count += 1 + len(item.tool_uses)
        elif isinstance(item, ToolResults):
            count += 1 + len(item.results)
        else:
            count += 1
    return count


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

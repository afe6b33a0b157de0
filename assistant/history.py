"""The stored conversation as the model sees it.

Everything is sent, in `seq` order: the person's text, the assistant's text and
tool calls, each tool result (bounded for the model; the raw result stays
whole in the database) and application events. Text from the person or from a
tool can't open or close an `<application_events>` block: it is neutralized
here, the one place history is built.
"""

import json
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Any
from uuid import UUID

from django.db.models import Exists, OuterRef, Value

from assistant.app_events import event_tool_names, neutralize
from assistant.history_fit import history_bytes, history_parts
from assistant.models import Turn
from assistant.page_context import is_page_context, is_untrusted_page_context
from assistant.trifecta import SeenCall, Taint, context_taint, untrusted_sources
from assistant_engine.providers.clients.base import (
    AssistantReply,
    FilePart,
    HistoryItem,
    ToolResult,
    ToolResults,
    ToolUse,
    UserText,
)
from assistant_engine.providers.windows import FRAMING_TOKENS_PER_PART
from assistant_engine.tools.framework import ToolError, result_marks, sources_of
from assistant_engine.tools.model_text import bound_for_model, result_for_model
from assistant_engine.tools.registry import get_tool
from conversations.models import Attachment, Message, ToolCall

# A page context told to the model (assistant/page_context.py) carries a title of the person's.
PAGE_CONTEXT_SEEN = SeenCall(flags=frozenset({"private"}))
# ... and a title written from third-party content is untrusted too.
UNTRUSTED_PAGE_CONTEXT_SEEN = SeenCall(flags=frozenset({"private", "untrusted"}),
                                       sources=("the title of the page you had open",))
# A file the person attached: theirs, so private (a confidential document must
# not be mailed out unguarded), and maybe written by someone else, so it may
# carry instructions.
ATTACHED_FILE_SEEN = SeenCall(flags=frozenset({"private", "untrusted"}))  # named by attached_file_seen
# Text a client uploaded (`PUT`, /ai/) in a role the engine writes itself, private and untrusted
# as an uploaded call: nobody vouches for where it came from (see `uploaded_text`).
UPLOADED_TEXT_SEEN = SeenCall(flags=None, sources=("content a client uploaded to the conversation",))
UNVOUCHED = ("a tool result nobody can vouch for (uploaded, or of a tool no longer declared)",)

UNFINISHED_CALL = "This tool call did not finish (the turn was interrupted)."


@dataclass(frozen=True)
class StoredCall:
    """A stored tool call as plain values (no model instance to build)."""

    tool_use_id: str
    name: str
    input: Any
    result: Any
    is_error: bool
    finished: bool


# The summary of earlier messages opens what is sent, in a block of its own:
# the model wrote it from what it read then (third-party text included), so it
# is neutralized like any text, and can't open an application events block.
SUMMARY_OPEN = "<conversation_summary>"
SUMMARY_CLOSE = "</conversation_summary>"
SUMMARY_HEAD = ("Earlier messages of this conversation, summarized (the messages after this block are sent "
                "whole):")


@dataclass(frozen=True)
class Start:
    """A message what is sent may begin with: its index in Context.items, its seq, its turn."""

    index: int
    seq: int
    turn_id: UUID | None


@dataclass(frozen=True)
class SummaryShown:
    """The conversation's summary in use: the messages before `through_seq`
    as the model is sent them, with the trifecta marks of what it stands for."""

    through_seq: int
    content: str
    taint: Taint

    def item(self) -> UserText:
        return UserText(f"{SUMMARY_OPEN}\n{SUMMARY_HEAD}\n{neutralize(self.content)}\n{SUMMARY_CLOSE}",
                        cache_here=True)

    @property
    def seen(self) -> SeenCall:
        flags = {"private"} if self.taint.read_private else set()
        return SeenCall(flags=frozenset(flags | ({"untrusted"} if self.taint.read_untrusted else set())),
                        sources=("earlier messages of this conversation (summarized)",))


@dataclass
class Context:
    """What the model will be sent, its size, the taint of the tool results in
    it, and the seq of the next message. The loop keeps it across the steps of
    a turn (it is the thread's only writer): it takes `next_seq` for each
    message it writes, and appends each finished reply's items."""

    items: list[HistoryItem]
    taint: Taint
    next_seq: int
    # Where the person (or the application) speaks, in order: what is sent may
    # begin only there (a call always travels with its result).
    starts: list["Start"] = field(default_factory=list)
    # The summary standing for the messages before `starts[0]` (items[0] is its text), if any.
    summary: SummaryShown | None = None
    # Where the third-party content in it came from, each once ("mail from x@y", "file z.pdf").
    sources: list[str] = field(default_factory=list)
    # Where each of the person's and the assistant's messages begins (the chlova
    # seed's messages, which its window counts: assistant/history_window.py).
    messages: list[int] = field(default_factory=list)
    size: int = 0
    parts: int = 0  # messages, tool uses and results: what providers frame one by one
    # Whether a Stop is requested for the turn the history was read for (load_context's stop_of); None: not read.
    stop_requested: bool | None = None

    def __post_init__(self):
        self.size, self.parts = history_bytes(self.items), history_parts(self.items)

    @property
    def tokens(self) -> int:
        """The bound of what the history adds to a request, in tokens."""
        return self.size + FRAMING_TOKENS_PER_PART * self.parts

    def replace_head(self, summary: "SummaryShown", start: int) -> None:
        """What is sent from now on: the summary, then the items from `start` on."""
        shift = start - 1
        self.items = [summary.item(), *self.items[start:]]
        self.starts = [Start(s.index - shift, s.seq, s.turn_id) for s in self.starts if s.index >= start]
        self.messages = [index - shift for index in self.messages if index >= start]
        self.summary = summary
        self.size, self.parts = history_bytes(self.items), history_parts(self.items)

    def append_reply(self, content: str, calls: list[StoredCall]) -> None:
        added = reply_items(content, calls)
        if added:
            self.messages.append(len(self.items))
        self.items.extend(added)
        self.size += history_bytes(added)
        self.parts += history_parts(added)


def load_history(thread_id: UUID) -> list[HistoryItem]:
    return load_context(thread_id).items


MESSAGE_FIELDS = ("id", "seq", "role", "content", "turn_id", "superseded_at")
CALL_FIELDS = ("message_id", "tool_use_id", "name", "input", "result", "is_error", "finished_at")
FILE_FIELDS = ("message_id", "name", "media_type", "data", "text", "model_bytes")


def load_files(thread_id: UUID, since_seq: int = 0) -> dict[UUID, tuple[FilePart, ...]]:
    """The files of the thread's messages from `since_seq` on, by message, in the order the person attached them."""
    by_message: dict[UUID, list[FilePart]] = defaultdict(list)
    rows = Attachment.objects.filter(message__thread_id=thread_id, message__seq__gte=since_seq).order_by(
        "position", "created_at", "id")
    for message_id, name, media_type, data, text, size in rows.values_list(*FILE_FIELDS):
        by_message[message_id].append(FilePart(neutralize(name), media_type, bytes(data), neutralize(text), size))
    return {message_id: tuple(parts) for message_id, parts in by_message.items()}


def load_context(thread_id: UUID, *, summary: SummaryShown | None = None, stop_of: UUID | None = None) -> Context:
    """One query for a conversation of text alone, three with tool calls and
    files, read as plain rows (building ~600 model instances per read was most
    of a turn's time). With a summary, only the messages after it: a turn
    reads as much of a 5,000-message conversation as of a 50-message one, and
    the summary brings the marks of what it stands for.

    `stop_of`: a turn whose Stop flag the same query reads (Context.stop_requested),
    so the loop's first model call is refused after a Stop accepted since its start."""
    since = summary.through_seq if summary else 0
    # Whether each message has calls or files (an index probe each): their own queries run only when one does.
    stopped = Exists(Turn.objects.filter(id=stop_of, cancel_requested_at__isnull=False)) if stop_of else Value(False)
    rows = list(
        Message.objects.filter(thread_id=thread_id, seq__gte=since).order_by("seq")
        .annotate(has_calls=Exists(ToolCall.objects.filter(message_id=OuterRef("pk"))),
                  has_files=Exists(Attachment.objects.filter(message_id=OuterRef("pk"))), stopped=stopped)
        .values_list(*MESSAGE_FIELDS, "has_calls", "has_files", "stopped")
    )
    messages = [row[:-3] for row in rows]
    calls_by_message = _load_calls(thread_id, since) if any(row[-3] for row in rows) else {}
    files = load_files(thread_id, since) if any(row[-2] for row in rows) else {}
    items: list[HistoryItem] = [summary.item()] if summary else []
    seen: list[SeenCall] = [summary.seen] if summary else []
    starts: list[Start] = []
    counted: list[int] = []
    next_seq = since
    for message_id, seq, role, content, turn_id, superseded_at in messages:
        next_seq = seq + 1  # a previous version keeps its seq: the next message goes after it
        calls = calls_by_message.get(message_id, [])
        seen.extend(seen_call(call, vouched=turn_id is not None) for call in calls)
        if role == Message.Role.EVENT and turn_id is not None:
            if is_page_context(content):  # its own block: the title of the person's object, private data
                seen.append(UNTRUSTED_PAGE_CONTEXT_SEEN if is_untrusted_page_context(content) else PAGE_CONTEXT_SEEN)
            else:
                # The application's events carry cards' descriptions and outcomes:
                # they taint like the tool that proposed them (superseded or not).
                seen.extend(seen_tool(name) for name in event_tool_names(content))
        if uploaded_text(role, content, turn_id):
            seen.append(UPLOADED_TEXT_SEEN)
        if message_id in files:  # seen once sent, as a superseded reply's reads
            seen.append(replace(ATTACHED_FILE_SEEN, sources=tuple(f"file {part.name}" for part in files[message_id])))
        if superseded_at is None:  # a previous version (regenerated, edited) is never sent again
            if role in (Message.Role.USER, Message.Role.EVENT):
                starts.append(Start(len(items), seq, turn_id))
            sent = _items_of(role, content, turn_id, calls, files.get(message_id, ()))
            if sent and role in (Message.Role.USER, Message.Role.ASSISTANT):
                counted.append(len(items))
            items.extend(sent)
    return Context(items, context_taint(seen), next_seq, starts, summary, sources=untrusted_sources(seen),
                   messages=counted,
                   # None: not read (no message since the summary, or no turn asked about).
                   stop_requested=bool(rows[-1][-1]) if rows and stop_of else None)


def _load_calls(thread_id: UUID, since_seq: int) -> dict[UUID, list[StoredCall]]:
    """The tool calls of the thread's messages from `since_seq` on, by message.
    Superseded replies' calls too: never sent again, but what they read still
    taints the conversation (a regenerate must not launder an inbox read)."""
    calls_by_message: dict[UUID, list[StoredCall]] = defaultdict(list)
    call_rows = (
        ToolCall.objects.filter(message__thread_id=thread_id, message__seq__gte=since_seq)
        .order_by("position").values_list(*CALL_FIELDS)
    )
    for message_id, tool_use_id, name, tool_input, result, is_error, finished_at in call_rows:
        calls_by_message[message_id].append(
            StoredCall(tool_use_id, name, tool_input, result, is_error, finished_at is not None)
        )
    return calls_by_message


def uploaded_text(role: str, content: str, turn_id: UUID | None) -> bool:
    """Whether a message's text came from a client in a role only the engine
    writes, so it may be third-party content (a fetched page, an email) the
    engine can't vouch for. The turn id tells: the application writes it on
    what its turns write, an upload can't set it, and a message sent back
    changed loses it.

    - `tool`: free text apart from a call; the loop keeps results on their
      calls, so only a client writes one.
    - `event`: without a turn id it is sent as inert text on the person's side,
      but it is not the person's own words (a client stores fetched content so).
    - `assistant`: the model takes its own earlier words as trusted context, so
      a reply a client claims the assistant wrote can carry injected
      instructions. Our turns' replies (turn id set) stay clean, or every
      conversation with a reply would be tainted; an MCP call's message has no
      text, only its call (which taints on its own).

    The person's own `user` text is theirs, as typed in the browser."""
    if not content:
        return False
    if role == Message.Role.TOOL:
        return True
    return turn_id is None and role in (Message.Role.EVENT, Message.Role.ASSISTANT)


def seen_call(call: StoredCall, *, vouched: bool) -> SeenCall:
    """The facts the trifecta guard needs about a stored call. `vouched`: the
    loop wrote it (its message carries a turn id no upload can set)."""
    try:
        tool = get_tool(call.name) if vouched else None
    except ToolError:
        tool = None  # a tool not declared today: nobody vouches for what it returned
    if tool is None:
        return SeenCall(flags=None, sources=UNVOUCHED)
    marks = frozenset() if call.is_error else result_marks(tool, call.result)
    return SeenCall(flags=tool.flags, marks=marks, sources=tuple(sources_of(tool, call.result)))


def seen_tool(name: str) -> SeenCall:
    """What an application event about a card of this tool shows the model."""
    try:
        tool = get_tool(name)
    except ToolError:
        return SeenCall(flags=None, sources=UNVOUCHED)
    return SeenCall(flags=tool.flags, sources=(tool.title,))


def _items_of(role: str, content: str, turn_id: UUID | None, calls: list[StoredCall],
              files: tuple[FilePart, ...] = ()) -> list[HistoryItem]:
    if role == Message.Role.USER:
        return [UserText(neutralize(content), files=files)]
    if role == Message.Role.EVENT:
        # Only the application's own blocks (marked with the turn that carried
        # them) are live; an `event` written by a client's upsert is inert text.
        return [UserText(content if turn_id else neutralize(content))]
    if role == Message.Role.ASSISTANT:
        return reply_items(content, calls)
    if role == Message.Role.SYSTEM:
        # A client's system prompt: never the model's (the product's and the organization's instructions are).
        return []
    # Role "tool": free text an offline client stored apart from a call.
    return [UserText(neutralize(content))] if content else []


def reply_items(content: str, calls: list[StoredCall]) -> list[HistoryItem]:
    """An assistant message as the model sees it: its words and tool uses, then their results."""
    # The model's own words are neutralized too: a client can upsert them,
    # and an injected inbox message could make the model echo a tag.
    reply = AssistantReply(
        text=neutralize(content),
        tool_uses=tuple(
            ToolUse(id=c.tool_use_id, name=c.name, input=_as_object(neutralize_json(c.input))) for c in calls
        ),
    )
    if not calls:
        return [reply] if content else []
    return [reply, ToolResults(tuple(tool_result_of(call) for call in calls))]


def tool_result_of(call: StoredCall) -> ToolResult:
    if not call.finished and call.result is None:
        return ToolResult(call.tool_use_id, UNFINISHED_CALL, is_error=True)
    if call.is_error:
        return ToolResult(call.tool_use_id, neutralize(bound_for_model(error_text(call.result))), is_error=True)
    return ToolResult(call.tool_use_id, neutralize(result_for_model(call.result)))


def error_text(result) -> str:
    if isinstance(result, dict) and isinstance(result.get("error"), str):
        return result["error"]
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, sort_keys=True)


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

"""What the MCP door keeps of a person's tool calls: the conversation that holds them, and the taint they add up to.

The server is stateless (any web process answers any request: server.py), so
nothing is remembered in memory. Each tools/call is stored whole — name,
input as sent, raw result — in the person's MCP conversation of the day: a
Thread of surface `mcp`, theirs in the token's organization, so it is in
their export, erased with them and shown in their conversation list (where
the card links of confirm and send tools open it).

The trifecta guard asks assistant/trifecta.py about what those stored calls
read in the last MCP_TAINT_HOURS, whichever client, session or web process
made them: a read in one session taints a send in any other. The taint is
read and the call recorded under one row lock per person and organization
(their Membership), so two calls at once can't both miss each other.
"""

from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from assistant.history import StoredCall, seen_call
from assistant.tools.registry import all_tools
from assistant.trifecta import Taint, context_taint, is_trifecta, taint_union
from conversations.models import Message, Thread, ToolCall
from conversations.selectors import threads_of
from conversations.services import message_append, thread_create
from organizations.members import Member
from organizations.models import Membership

SURFACE = "mcp"


def conversation_locked(member: Member, now: datetime) -> Thread:
    """The person's MCP conversation of the day (UTC), its row locked (an
    append takes the next seq). Needs a transaction.

    One per person and organization per day, whatever the clients: a new one
    at the first call of a day, and when the person is chatting in it (a turn
    is its only writer then) or it holds CONVERSATION_MAX_MESSAGES."""
    # The person's lock: the day's first two calls must not open two conversations.
    list(Membership.objects.select_for_update().filter(
        organization_id=member.organization_id, user_id=member.user_id).values_list("id", flat=True))
    day = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    thread = (threads_of(member).select_for_update().filter(surface=SURFACE, created_at__gte=day)
              .order_by("-created_at").first())
    if (thread is not None and thread.status == Thread.Status.IDLE
            and thread.next_seq < settings.CONVERSATION_MAX_MESSAGES):
        return thread
    thread = thread_create(member, title=f"MCP tool calls, {day:%Y-%m-%d}", now=now)
    # Continuous, as a Telegram chat: a turn started in it gets a window of the calls.
    Thread.objects.filter(id=thread.id).update(surface=SURFACE, continuous=True)
    thread.surface, thread.continuous = SURFACE, True
    return thread


def call_started(member: Member, thread: Thread, name: str, tool_input: Any, now: datetime) -> ToolCall:
    """The call, stored before it runs: its taint counts from the moment the
    client could see its result."""
    message = message_append(member, thread=thread, role=Message.Role.ASSISTANT, content="", now=now)
    return ToolCall.objects.create(message=message, position=0, tool_use_id=f"mcp_{message.id.hex}", name=name,
                                   input=tool_input, created_at=now)


def call_finished(call: ToolCall, result: Any, *, is_error: bool) -> None:
    call.result, call.is_error, call.finished_at = result, is_error, timezone.now()
    call.save(update_fields=["result", "is_error", "finished_at"])


def taint_in_window(member: Member, now: datetime) -> Taint:
    """The taint of the person's MCP calls (in this organization) of the last
    MCP_TAINT_HOURS: each call's declared flags, and its result's own marks
    (content written from an untrusted context, read back), by the same rule
    as a turn's history (assistant.history.seen_call, assistant.trifecta)."""
    since = now - timedelta(hours=settings.MCP_TAINT_HOURS)
    threads = threads_of(member).filter(surface=SURFACE, last_activity_at__gte=since)
    calls = ToolCall.objects.filter(message__thread__in=threads, created_at__gte=since)
    # The declared flags need only the distinct names; the results only of the tools that mark them.
    declared = context_taint(_seen(name) for name in calls.values_list("name", flat=True).distinct().order_by())
    if is_trifecta(declared):
        return declared
    marking = [tool.name for tool in all_tools() if tool.result_marks is not None]
    results = calls.filter(name__in=marking, is_error=False).values_list("name", "result").iterator(chunk_size=200)
    return taint_union(declared, context_taint(_seen(name, result) for name, result in results))


def _seen(name: str, result: Any = None):
    # Vouched: the door stored it (a tool not declared today still counts as both taints).
    return seen_call(StoredCall(tool_use_id="", name=name, input=None, result=result, is_error=False, finished=True),
                     vouched=True)

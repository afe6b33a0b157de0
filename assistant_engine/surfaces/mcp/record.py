"""What the MCP door keeps of a person's tool calls: the conversation that holds them, and what they have read.

The server is stateless (any web process answers any request: server.py), so
nothing is remembered in memory. Each tools/call is stored whole — name,
input as sent, raw result — in the person's MCP conversation of the day: a
Thread of surface `mcp`, theirs in the token's organization, so it is in
their export, erased with them and shown in their conversation list (where
the card links of confirm and send tools open it).

The trifecta guard's state is one row per person and organization
(McpReads): when their MCP clients last read private data and third-party
content. A call's taint is what was read in the last MCP_TAINT_HOURS,
whichever client, session or web process read it; what each call adds is
decided by assistant/trifecta.py (`taint_after`, from the tool's declared
flags, then its result's marks), the rule of a turn. The taint is read and
the call recorded under that row's lock, so two calls at once can't both miss
each other; deleting the conversation does not clear it.
"""

from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from assistant.proposals import MAX_SOURCES
from assistant.trifecta import CLEAN, Taint, taint_after
from assistant_engine.organizations.members import Member
from assistant_engine.surfaces.mcp.models import McpReads
from assistant_engine.tools import framework
from conversations.models import Message, Thread, ToolCall
from conversations.selectors import threads_of
from conversations.services import message_append, thread_create

SURFACE = "mcp"


def taint_locked(member: Member, now: datetime) -> tuple[Taint, list[str]]:
    """What the person's MCP clients read in this organization in the last
    MCP_TAINT_HOURS, and where its third-party content came from; their row
    locked until the transaction ends."""
    reads, _ = McpReads.objects.select_for_update().get_or_create(
        organization_id=member.organization_id, user_id=member.user_id)
    since = now - timedelta(hours=settings.MCP_TAINT_HOURS)
    untrusted = reads.untrusted_at is not None and reads.untrusted_at >= since
    taint = Taint(read_private=reads.private_at is not None and reads.private_at >= since, read_untrusted=untrusted)
    if not untrusted and reads.untrusted_sources:  # a lapsed window: its sources go with it
        reads.untrusted_sources = []
        reads.save(update_fields=["untrusted_sources"])
    return taint, list(reads.untrusted_sources)


def add_sources(member: Member, labels: list[str]) -> None:
    """Where an untrusted result came from, kept with the reads (the latest
    MAX_SOURCES). Under the row's lock: two calls finishing at once both keep theirs."""
    if not labels:
        return
    with transaction.atomic():
        reads = McpReads.objects.select_for_update().get(organization_id=member.organization_id,
                                                         user_id=member.user_id)
        kept = [label for label in reads.untrusted_sources if label not in labels]
        reads.untrusted_sources = [*kept, *labels][-MAX_SOURCES:]
        reads.save(update_fields=["untrusted_sources"])


def add_reads(member: Member, tool: framework.Tool, flags, now: datetime) -> None:
    """What a call of `tool` showed the client, by the trifecta rule: its
    declared flags when it is called, its result's marks when it returns."""
    added = taint_after(CLEAN, tool.tool_class, flags)
    # Never back in time: a call finishing late must not shorten a later read's window.
    fields = {name: Greatest(Coalesce(F(name), Value(now)), Value(now))
              for name, read in (("private_at", added.read_private), ("untrusted_at", added.read_untrusted)) if read}
    if fields:
        McpReads.objects.filter(organization_id=member.organization_id, user_id=member.user_id).update(**fields)


def conversation_locked(member: Member, now: datetime) -> Thread:
    """The person's MCP conversation of the day (UTC), its row locked (an
    append takes the next seq). Call it after `taint_locked`, whose lock
    keeps the day's first two calls from opening two conversations.

    One per person and organization per day, whatever the clients: a new one
    at the first call of a day, and when the person is chatting in it (a turn
    is its only writer then) or it holds CONVERSATION_MAX_MESSAGES."""
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
    message = message_append(member, thread=thread, role=Message.Role.ASSISTANT, content="", now=now)
    return ToolCall.objects.create(message=message, position=0, tool_use_id=f"mcp_{message.id.hex}", name=name,
                                   input=tool_input, created_at=now)


def call_finished(call: ToolCall, result: Any, *, is_error: bool) -> None:
    call.result, call.is_error, call.finished_at = result, is_error, timezone.now()
    call.save(update_fields=["result", "is_error", "finished_at"])

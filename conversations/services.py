"""Writes of conversations. Each takes the verified Member first."""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from django.db import IntegrityError, transaction
from django.utils import timezone

from conversations.models import Message, Thread, ToolCall
from conversations.selectors import ConversationNotFound, thread_get_for_member, threads_of
from conversations.titles import choose_title, derive_title
from organizations.members import Member


class ConversationBusy(Exception):
    """A turn is running on the thread: it can't be rewritten or deleted now."""


class MessageIdConflict(Exception):
    """A message id in an upsert already belongs to another conversation."""


@dataclass(frozen=True)
class ToolCallData:
    tool_use_id: str
    name: str
    input: Any
    result: Any
    is_error: bool


@dataclass(frozen=True)
class MessageData:
    id: UUID
    role: str
    content: str
    created_at: datetime
    tool_calls: list[ToolCallData] = field(default_factory=list)


@dataclass(frozen=True)
class ConversationData:
    id: UUID
    title: str | None
    created_at: datetime
    updated_at: datetime
    messages: list[MessageData]


@dataclass(frozen=True)
class UpsertOutcome:
    applied: bool
    thread: Thread


def thread_create(member: Member, *, title: str = "", now: datetime | None = None) -> Thread:
    now = now or timezone.now()
    return Thread.objects.create(
        organization_id=member.organization_id,
        user_id=member.user_id,
        title=derive_title(title),
        created_at=now,
        updated_at=now,
        last_activity_at=now,
    )


def message_append(
    member: Member,
    *,
    thread: Thread,
    role: str,
    content: str,
    status: str = Message.Status.COMPLETE,
    turn_id: UUID | None = None,
    responding: bool = False,
    now: datetime | None = None,
) -> Message:
    """Append a message at the end of the thread and mark the thread active.

    Needs the thread row locked by the caller (select_for_update), so two
    appends can't take the same seq. `turn_id`: the turn the application
    writes it for (an upsert can never set it); `responding`: that turn starts
    with this message (the thread is marked in the same write).
    """
    if thread.organization_id != member.organization_id or thread.user_id != member.user_id:
        raise ConversationNotFound
    now = now or timezone.now()
    message = Message.objects.create(
        thread=thread,
        seq=thread.next_seq,
        role=role,
        content=content,
        status=status,
        turn_id=turn_id,
        created_at=now,
    )
    thread.next_seq += 1
    thread.updated_at = now
    thread.last_activity_at = now
    update_fields = ["next_seq", "updated_at", "last_activity_at"]
    if responding:
        thread.status = Thread.Status.RESPONDING
        update_fields.append("status")
    if not thread.title and role == Message.Role.USER:
        thread.title = derive_title(content)
        update_fields.append("title")
    thread.save(update_fields=update_fields)
    return message


def thread_delete(member: Member, *, thread_id: UUID) -> None:
    """Delete a thread with its messages and tool calls; refused while responding."""
    with transaction.atomic():
        # Lock the row: a turn can't start between the busy check and the delete.
        thread = thread_get_for_member(member, thread_id, for_update=True)
        if thread.status == Thread.Status.RESPONDING:
            raise ConversationBusy
        thread.delete()


def conversation_upsert(member: Member, *, data: ConversationData) -> UpsertOutcome:
    """Full upsert from an offline-first client; last write wins by updatedAt.

    All or nothing: one transaction. The owner is always `member`; an id that
    belongs to someone else is not found and nothing changes.
    """
    try:
        with transaction.atomic():
            return _upsert_locked(member, data)
    except IntegrityError:
        # Two first writes of the same new id raced to create it: the loser
        # retries against the row the winner created (now lockable).
        with transaction.atomic():
            return _upsert_locked(member, data)


def _upsert_locked(member: Member, data: ConversationData) -> UpsertOutcome:
    if Thread.objects.filter(id=data.id).exclude(
        organization_id=member.organization_id, user_id=member.user_id
    ).exists():
        raise ConversationNotFound
    # Lock the row: a concurrent upsert or a starting turn must see this write whole.
    thread = threads_of(member).select_for_update().filter(id=data.id).first()
    if thread is not None:
        if thread.status == Thread.Status.RESPONDING:
            raise ConversationBusy
        if data.updated_at <= thread.updated_at:
            return UpsertOutcome(applied=False, thread=thread)
    _check_message_ids_free(data)
    if thread is None:
        thread = Thread(id=data.id, organization_id=member.organization_id, user_id=member.user_id)
    _apply_conversation(thread, data)
    return UpsertOutcome(applied=True, thread=thread)


def _server_fields_of_unchanged(thread: Thread, data: ConversationData) -> dict[UUID, dict]:
    """Fields a client can't send (which turn wrote a message, its status and
    notice) survive an upsert for messages it sent back unchanged. The turn id
    is what makes an application `event` block live for the model, so a
    changed or new `event` message never gets one."""
    if thread.pk is None or thread._state.adding:
        return {}
    sent = {message.id: message for message in data.messages}
    kept = {}
    for stored in Message.objects.filter(thread=thread, id__in=list(sent)).prefetch_related("tool_calls"):
        if _same_message(stored, sent[stored.id]):
            kept[stored.id] = {"turn_id": stored.turn_id, "status": stored.status, "notice": stored.notice}
    return kept


def _same_message(stored: Message, sent) -> bool:
    """Role, text and tool calls unchanged: a changed tool result must not keep
    the turn id, which is what vouches for its taint (assistant/trifecta.py)."""
    calls = sorted(stored.tool_calls.all(), key=lambda call: call.position)
    return (stored.role, stored.content) == (sent.role, sent.content) and [
        (c.tool_use_id, c.name, c.input, c.result, c.is_error) for c in calls
    ] == [(c.tool_use_id, c.name, c.input, c.result, c.is_error) for c in sent.tool_calls]


def thread_history_counters_reset(thread: Thread, *, message_count: int) -> None:
    """Before saving a rewrite of the messages: the next seq follows them, and
    the history's size for the model is unknown until measured again."""
    thread.next_seq, thread.history_bytes = message_count, None


def _check_message_ids_free(data: ConversationData) -> None:
    ids = [message.id for message in data.messages]
    if Message.objects.filter(id__in=ids).exclude(thread_id=data.id).exists():
        raise MessageIdConflict


def _apply_conversation(thread: Thread, data: ConversationData) -> None:
    first_user = next((m.content for m in data.messages if m.role == Message.Role.USER), "")
    thread.title = choose_title(data.title, first_user)
    thread.created_at = data.created_at
    thread.updated_at = data.updated_at
    # Activity is when the server received the write, not the client's clock:
    # an upload of an old conversation must not be purged as idle at once.
    thread.last_activity_at = timezone.now()
    thread_history_counters_reset(thread, message_count=len(data.messages))
    thread.save()
    kept = _server_fields_of_unchanged(thread, data)
    Message.objects.filter(thread=thread).delete()
    messages = Message.objects.bulk_create(
        [
            Message(
                id=message.id,
                thread=thread,
                seq=seq,
                role=message.role,
                content=message.content,
                created_at=message.created_at,
                **kept.get(message.id, {}),
            )
            for seq, message in enumerate(data.messages)
        ]
    )
    ToolCall.objects.bulk_create(
        [
            ToolCall(
                message=stored,
                position=position,
                tool_use_id=call.tool_use_id,
                name=call.name,
                input=call.input,
                result=call.result,
                is_error=call.is_error,
                created_at=message.created_at,
                finished_at=message.created_at,
            )
            for stored, message in zip(messages, data.messages, strict=True)
            for position, call in enumerate(message.tool_calls)
        ]
    )

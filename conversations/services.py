"""Writes of conversations. Each takes the verified Member first."""

import json
import logging
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID, uuid4

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from assistant_engine.organizations.members import Member
from conversations.models import API_ID_PREFIX, Message, Summary, Thread, ToolCall
from conversations.selectors import (
    ConversationNotFound,
    thread_by_api_id,
    thread_by_client_id,
    thread_get_for_member,
)
from conversations.titles import choose_title, derive_title
from conversations.versions import version_after

logger = logging.getLogger("conversations.upsert")


class ConversationBusy(Exception):
    """A turn is running on the thread: it can't be rewritten or deleted now."""


class TooManyMessages(Exception):
    """An upload has more messages than one conversation may store."""


class ConversationTooLarge(Exception):
    """An upload stores more bytes than one conversation may."""


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
    # None (an /ai/ client may leave it out): the stored message's, else the server's time.
    created_at: datetime | None
    tool_calls: list[ToolCallData] = field(default_factory=list)
    # Only from the /ai/ door: the client's own string id (when it is not the
    # UUID `id` itself) and the message as it sent it (see Message.client_json).
    external_id: str = ""
    client_json: str = ""


@dataclass(frozen=True)
class ConversationData:
    # None: the conversation is known by `external_id` (the /ai/ door) and,
    # when new, the server draws its primary key.
    id: UUID | None
    title: str | None
    created_at: datetime | None  # None: the stored conversation's, else the server's time
    updated_at: datetime
    messages: list[MessageData]
    # The /ai/ client's own id, looked up among the person's conversations
    # only (see Thread.external_id); and its document (see Thread.client_json).
    external_id: str = ""
    client_json: str = ""


@dataclass(frozen=True)
class UpsertWrites:
    """Rows an upsert wrote, by kind: counts only (logged, benchmarked)."""

    messages_created: int = 0
    messages_updated: int = 0
    messages_deleted: int = 0
    tool_calls_created: int = 0
    tool_calls_deleted: int = 0

    @property
    def rows(self) -> int:
        return (self.messages_created + self.messages_updated + self.messages_deleted
                + self.tool_calls_created + self.tool_calls_deleted)


@dataclass(frozen=True)
class UpsertOutcome:
    applied: bool
    thread: Thread
    writes: UpsertWrites = field(default_factory=UpsertWrites)


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
    thread.updated_at = version_after(thread.updated_at, now)
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

    All or nothing: one transaction, after the bounds are checked. The owner
    is always `member`; an id that belongs to someone else is not found and
    nothing changes. Only what changed is written.
    """
    check_conversation_bounds(data)
    try:
        with transaction.atomic():
            outcome = _upsert_locked(member, data)
    except IntegrityError:
        # Two first writes of the same new id raced to create it: the loser
        # retries against the row the winner created (now lockable).
        with transaction.atomic():
            outcome = _upsert_locked(member, data)
    logger.info("conversation_upserted", extra={
        "thread_id": str(outcome.thread.id), "applied": outcome.applied, **asdict(outcome.writes),
    })
    return outcome


def check_conversation_bounds(data: ConversationData) -> None:
    """Refuse a conversation larger than one may store, before any lock is taken."""
    if len(data.messages) > settings.CONVERSATION_MAX_MESSAGES:
        raise TooManyMessages
    if stored_bytes(data) > settings.CONVERSATION_MAX_BYTES:
        raise ConversationTooLarge


def stored_bytes(data: ConversationData) -> int:
    """What a conversation stores, in bytes: the UTF-8 text of its messages and
    the compact JSON of its tool calls (raw results are kept whole, so they
    are most of it)."""
    total = len(data.client_json.encode())
    for message in data.messages:
        # An /ai/ client's document is stored as it came (tool calls included).
        total += len(message.content.encode()) + len(message.client_json.encode())
        for call in message.tool_calls:
            total += len(call.tool_use_id.encode()) + len(call.name.encode())
            total += len(_canonical_json(call.input).encode()) + len(_canonical_json(call.result).encode())
    return total


def _upsert_locked(member: Member, data: ConversationData) -> UpsertOutcome:
    external_id = data.external_id
    if external_id:
        mine = thread_by_client_id(member, external_id)
    else:
        mine = thread_by_api_id(member, data.id)
    # Lock the row: a concurrent upsert or a starting turn must see this write whole.
    thread = mine.select_for_update().first()
    if thread is not None:
        if thread.status == Thread.Status.RESPONDING:
            raise ConversationBusy
        if data.updated_at <= thread.updated_at:
            return UpsertOutcome(applied=False, thread=thread)
    is_new = thread is None
    if is_new:
        thread_id = data.id or uuid4()
        if data.id and Thread.objects.filter(id=data.id).exists():
            # Another's (or a squatted) id: a conversation of the person's own,
            # which /api/ names by that id for them only. Same answer either way.
            thread_id, external_id = uuid4(), f"{API_ID_PREFIX}{data.id}"
        thread = Thread(id=thread_id, organization_id=member.organization_id, user_id=member.user_id,
                        external_id=external_id)
    _save_thread(thread, data, is_new=is_new)
    writes = _apply_messages(thread, data.messages, is_new=is_new)
    return UpsertOutcome(applied=True, thread=thread, writes=writes)


def _save_thread(thread: Thread, data: ConversationData, *, is_new: bool) -> None:
    first_user = next((m.content for m in data.messages if m.role == Message.Role.USER), "")
    thread.title = choose_title(data.title, first_user)
    thread.created_at = data.created_at or (None if is_new else thread.created_at) or timezone.now()
    thread.updated_at = data.updated_at
    thread.client_json = data.client_json
    # Activity is when the server received the write, not the client's clock:
    # an upload of an old conversation must not be purged as idle at once.
    thread.last_activity_at = timezone.now()
    thread_history_counters_reset(thread, message_count=len(data.messages))
    if is_new:
        thread.save(force_insert=True)
    else:
        thread.save(update_fields=["title", "created_at", "updated_at", "last_activity_at", "client_json",
                                   "next_seq", "history_bytes"])


def thread_history_counters_reset(thread: Thread, *, message_count: int) -> None:
    """Before saving a rewrite of the messages: the next seq follows them, and
    the history's size for the model is unknown until measured again."""
    thread.next_seq, thread.history_bytes = message_count, None


# What an upsert reads of each stored message: plain tuples, not model
# instances (a re-upload of thousands of messages reads them all, under the lock).
_STORED_FIELDS = ("id", "client_id", "seq", "role", "content", "created_at", "turn_id", "status", "notice",
                  "client_json")
_SERVER_FIELDS = ("seq", "role", "content", "created_at", "turn_id", "status", "notice", "client_json")


def _apply_messages(thread: Thread, sent: list[MessageData], *, is_new: bool) -> UpsertWrites:
    """Make the thread's messages equal to `sent`, touching only the rows that differ.

    Messages are matched by their client id; an unchanged message (and its
    tool calls) keeps its row, so tool calls, turns and cards linked to it
    stay linked. Needs the thread row locked.
    """
    stored = {} if is_new else {
        row.client_id: row
        for row in Message.objects.filter(thread=thread).values_list(*_STORED_FIELDS, named=True)
    }
    stored_calls = _calls_by_message(thread) if stored else {}
    sent_ids = {message.id for message in sent}
    gone = [row.id for client_id, row in stored.items() if client_id not in sent_ids]
    # The seqs this rewrite touches (old and new places): a summary of the messages before them stays true.
    touched = [row.seq for client_id, row in stored.items() if client_id not in sent_ids]
    calls_deleted = 0
    if gone:
        _, deleted = Message.objects.filter(pk__in=gone).delete()
        calls_deleted = deleted.get(ToolCall._meta.label, 0)
    created, updated, reseated, replaced = [], [], [], []
    for seq, message in enumerate(sent):
        row = stored.get(message.id)
        if row is None:
            new = Message(client_id=message.id, thread=thread, seq=seq, role=message.role,
                          content=message.content, created_at=message.created_at or timezone.now(),
                          external_id=message.external_id, client_json=message.client_json)
            created.append((new, message))
            touched.append(seq)
            continue
        if row.seq != seq:
            reseated.append(row.id)
            touched += [row.seq, seq]
        calls_changed = _call_rows(stored_calls.get(row.id, [])) != _call_rows(message.tool_calls)
        fields = _fields_after(row, message, seq, calls_changed=calls_changed)
        if fields != {name: getattr(row, name) for name in _SERVER_FIELDS}:
            updated.append(Message(id=row.id, thread=thread, client_id=row.client_id, **fields))
            touched.append(seq)
        if calls_changed:
            replaced.append((Message(id=row.id, thread=thread), message))
    _write_message_rows(updated, reseated, [new for new, _ in created], offset=len(stored) + len(sent))
    if replaced:
        calls_deleted += ToolCall.objects.filter(message_id__in=[row.id for row, _ in replaced]).delete()[0]
    calls_created = ToolCall.objects.bulk_create(
        [call for row, message in [*created, *replaced] for call in _tool_call_rows(row, message)]
    )
    if touched and min(touched) < thread.summary_seq:
        summaries_forget(thread)
    return UpsertWrites(
        messages_created=len(created), messages_updated=len(updated), messages_deleted=len(gone),
        tool_calls_created=len(calls_created), tool_calls_deleted=calls_deleted,
    )


def summaries_forget(thread: Thread) -> None:
    """A rewrite of messages a summary stands for makes it untrue: the next
    turn summarizes what is there now (the messages themselves are the truth)."""
    Summary.objects.filter(thread=thread).delete()
    Thread.objects.filter(pk=thread.pk).update(summary_seq=0)
    thread.summary_seq = 0


def _fields_after(row, message: MessageData, seq: int, *, calls_changed: bool) -> dict:
    """A stored message's fields once brought to what was sent.

    Fields a client can't send (which turn wrote a message, its status and
    notice) survive when the role, content and tool calls come back
    unchanged. The turn id is what makes an application `event` block live
    for the model and vouches for a tool result's taint (assistant/trifecta.py),
    so a changed message loses it (and a new one never gets one).
    """
    fields = {"seq": seq, "role": message.role, "content": message.content,
              "created_at": message.created_at or row.created_at,
              "turn_id": row.turn_id, "status": row.status, "notice": row.notice,
              # The last write's own document: an /api/ write (none) clears an /ai/ one.
              "client_json": message.client_json}
    if calls_changed or (row.role, row.content) != (message.role, message.content):
        fields.update(turn_id=None, status=Message.Status.COMPLETE, notice="")
    return fields


def _write_message_rows(updated: list[Message], reseated: list[UUID], created: list[Message], *,
                        offset: int) -> None:
    if reseated:
        # (thread, seq) is unique and checked row by row: rows that move are
        # first parked past every old and new seq, so no two collide on the way.
        Message.objects.filter(pk__in=reseated).update(seq=F("seq") + offset)
    if updated:
        Message.objects.bulk_update(updated, list(_SERVER_FIELDS))
    if created:
        Message.objects.bulk_create(created)


def _calls_by_message(thread: Thread) -> dict[UUID, list]:
    calls: dict[UUID, list] = {}
    rows = (
        ToolCall.objects.filter(message__thread=thread)
        .order_by("message_id", "position")
        .values_list("message_id", "tool_use_id", "name", "input", "result", "is_error", named=True)
    )
    for call in rows:
        calls.setdefault(call.message_id, []).append(call)
    return calls


def _call_rows(calls) -> list[tuple]:
    """Tool calls (stored or sent) in a form where equal means unchanged.

    JSON is compared as canonical text, not as Python values: `1 == True ==
    1.0` in Python, and a result changed from 1 to true must be written.
    """
    return [
        (call.tool_use_id, call.name, _canonical_json(call.input), _canonical_json(call.result), call.is_error)
        for call in calls
    ]


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _tool_call_rows(row: Message, message: MessageData) -> list[ToolCall]:
    moment = message.created_at or row.created_at or timezone.now()
    return [
        ToolCall(
            message=row, position=position, tool_use_id=call.tool_use_id, name=call.name, input=call.input,
            result=call.result, is_error=call.is_error, created_at=moment, finished_at=moment,
        )
        for position, call in enumerate(message.tool_calls)
    ]

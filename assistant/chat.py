"""POST /api/chat: append the person's message and queue a turn.

One transaction: the thread (created or locked), the message, the turn and
the credit reservation. The turn is enqueued after commit; if the broker
can't take it, everything is undone and the person is told to retry.
"""

import logging
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from assistant.cards import events_for_next_turn
from assistant.history import history_bytes, load_history, uses_window
from assistant.models import Turn
from assistant.providers import selected_option
from conversations.models import Message, Thread
from conversations.selectors import thread_get_for_member
from conversations.services import ConversationBusy, message_append, thread_create
from credits.services import credits_release, credits_reserve
from organizations.members import Member

logger = logging.getLogger("assistant.chat")


class ConversationFull(Exception):
    """The history is over the bound: a new conversation is needed."""


class QueueUnavailable(Exception):
    """The broker did not take the turn."""


@dataclass(frozen=True)
class SubmittedTurn:
    thread_id: UUID
    turn_id: UUID
    message_id: UUID


def chat_submit(member: Member, *, message: str, conversation_id: UUID | None) -> SubmittedTurn:
    """Raises ConversationNotFound, ConversationBusy, ConversationFull,
    CreditsExhausted (nothing written) or QueueUnavailable (all undone)."""
    option = selected_option()
    enqueue_error: list[Exception] = []
    created_thread = conversation_id is None
    # Outside the transaction: reading a long history must not hold the write
    # lock (SQLite) while others wait. The loop checks again anyway.
    existing = None if created_thread else thread_get_for_member(member, conversation_id)
    if existing is None:
        check_room(0, message)
    elif not uses_window(existing.continuous):  # a continuous conversation is never full
        check_room(history_bytes(load_history(existing.id)), message)
    with transaction.atomic():
        thread = _thread_for_chat(member, conversation_id)
        before = ThreadState.of(thread)
        events_message = None if created_thread else _deliver_card_events(member, thread)
        user_message = message_append(member, thread=thread, role=Message.Role.USER, content=message)
        turn = Turn.objects.create(
            thread=thread, organization_id=member.organization_id, user_id=member.user_id,
            user_message=user_message, model_option=option.id,
        )
        # The turn id marks the messages the application wrote for this turn:
        # history trusts an `event` message only with it (an upsert can't set it).
        Message.objects.filter(id__in=[m.id for m in (user_message, events_message) if m]).update(turn_id=turn.id)
        reservation = credits_reserve(member, turn_id=turn.id)
        turn.credit_month, turn.reserved_micros = reservation.month, reservation.micros
        turn.save(update_fields=["credit_month", "reserved_micros"])
        thread.status = Thread.Status.RESPONDING
        thread.save(update_fields=["status"])
        transaction.on_commit(lambda: _enqueue_or_note(turn.id, enqueue_error))
    if enqueue_error and chat_undo(turn_id=turn.id, thread_id=thread.id, restore=None if created_thread else before):
        raise QueueUnavailable from enqueue_error[0]
    return SubmittedTurn(thread_id=thread.id, turn_id=turn.id, message_id=user_message.id)


class NothingToRedo(Exception):
    """The conversation has no message of the person to regenerate the reply of, or to edit."""


def chat_regenerate(member: Member, *, conversation_id: UUID) -> SubmittedTurn:
    """A new reply to the last user message, on the same history without the
    old reply: the old reply stays as a previous version (superseded_at).
    Raises ConversationNotFound, ConversationBusy, NothingToRedo,
    CreditsExhausted (nothing written) or QueueUnavailable (all undone)."""
    return _redo(member, conversation_id=conversation_id, new_text=None)


def chat_edit(member: Member, *, conversation_id: UUID, message: str) -> SubmittedTurn:
    """The last user message edited and resent: it and its reply stay as a
    previous version; the new message (`replaces` the old one) gets a turn."""
    thread = thread_get_for_member(member, conversation_id)
    check_room(history_bytes(load_history(thread.id)), message)
    return _redo(member, conversation_id=conversation_id, new_text=message)


def _redo(member: Member, *, conversation_id: UUID, new_text: str | None) -> SubmittedTurn:
    option = selected_option()
    enqueue_error: list[Exception] = []
    with transaction.atomic():
        thread = _thread_for_chat(member, conversation_id)
        before = ThreadState.of(thread)
        last = _last_user_message(thread)
        now = timezone.now()
        replaced = Message.objects.filter(thread=thread, seq__gte=last.seq if new_text else last.seq + 1,
                                          superseded_at__isnull=True)
        superseded_ids = list(replaced.values_list("id", flat=True))
        replaced.update(superseded_at=now)
        user_message = last
        if new_text is not None:
            user_message = message_append(member, thread=thread, role=Message.Role.USER, content=new_text)
            Message.objects.filter(id=user_message.id).update(replaces=last.client_id)
        turn = Turn.objects.create(
            thread=thread, organization_id=member.organization_id, user_id=member.user_id,
            user_message=user_message, model_option=option.id,
        )
        if new_text is not None:
            Message.objects.filter(id=user_message.id).update(turn_id=turn.id)
        reservation = credits_reserve(member, turn_id=turn.id)
        turn.credit_month, turn.reserved_micros = reservation.month, reservation.micros
        turn.save(update_fields=["credit_month", "reserved_micros"])
        Thread.objects.filter(id=thread.id).update(status=Thread.Status.RESPONDING)
        transaction.on_commit(lambda: _enqueue_or_note(turn.id, enqueue_error))
    if enqueue_error and chat_undo(turn_id=turn.id, thread_id=thread.id, restore=before):
        Message.objects.filter(id__in=superseded_ids).update(superseded_at=None)
        raise QueueUnavailable from enqueue_error[0]
    return SubmittedTurn(thread_id=thread.id, turn_id=turn.id, message_id=user_message.client_id)


def _last_user_message(thread: Thread) -> Message:
    last = (Message.objects.filter(thread=thread, role=Message.Role.USER, superseded_at__isnull=True)
            .order_by("-seq").first())
    if last is None:
        raise NothingToRedo
    return last


def _thread_for_chat(member: Member, conversation_id: UUID | None) -> Thread:
    if conversation_id is None:
        return thread_create(member)
    # Lock the row: two messages sent at once can't both start a turn.
    thread = thread_get_for_member(member, conversation_id, for_update=True)
    if thread.status == Thread.Status.RESPONDING:
        raise ConversationBusy
    return thread


def _deliver_card_events(member: Member, thread: Thread) -> Message | None:
    """Cards decided since the last turn reach the model once, as an `event`
    message placed before (apart from) the person's new text."""
    block = events_for_next_turn(thread.id)
    if not block:
        return None
    return message_append(member, thread=thread, role=Message.Role.EVENT, content=block)


def check_room(used: int, message: str) -> None:
    if used + len(message.encode()) > settings.ASSISTANT_HISTORY_BYTES:
        raise ConversationFull


def _enqueue_or_note(turn_id: UUID, errors: list[Exception]) -> None:
    try:
        enqueue_turn(turn_id)
    except Exception as error:  # any broker failure: the caller undoes the turn
        logger.warning("turn_enqueue_failed", extra={"turn_id": str(turn_id), "error_type": type(error).__name__})
        errors.append(error)


def enqueue_turn(turn_id: UUID) -> None:
    from assistant.tasks import run_turn_task
    from config.celery import ensure_broker_folders

    ensure_broker_folders()
    Turn.objects.filter(id=turn_id).update(enqueue_attempts=F("enqueue_attempts") + 1)
    run_turn_task.apply_async(
        args=[str(turn_id)],
        retry=True,
        # Fail fast: the person is waiting for the answer (503, then retry).
        retry_policy={"max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 0.5},
    )


@dataclass(frozen=True)
class ThreadState:
    """What appending a message changes on a thread, to put back on undo."""

    title: str
    updated_at: datetime
    last_activity_at: datetime

    @classmethod
    def of(cls, thread: Thread) -> "ThreadState":
        return cls(thread.title, thread.updated_at, thread.last_activity_at)


def chat_undo(*, turn_id: UUID, thread_id: UUID, restore: ThreadState | None) -> bool:
    """Undo a submitted turn that no broker took: release the reservation (no
    model call was made), remove the turn and the message, and put the thread
    back as it was (`restore`; None: the thread was new, delete it).

    Returns False, undoing nothing, when a worker has claimed the turn after
    all (a publish that landed though its acknowledgement failed): it runs.
    """
    with transaction.atomic():
        # Lock the turn: a worker's claim and this undo can't both win.
        turn = Turn.objects.select_for_update().filter(id=turn_id, status=Turn.Status.QUEUED).first()
        if turn is None:
            return False
        credits_release(turn_id=turn_id, reason="queue_unavailable", job="chat_submit")
        # The events block stays: its cards are marked delivered, and the next
        # turn of this thread must still see it.
        Message.objects.filter(turn_id=turn_id).exclude(role=Message.Role.EVENT).delete()
        turn.delete()
        if restore is None:
            Thread.objects.filter(id=thread_id).delete()
        else:
            Thread.objects.filter(id=thread_id).update(
                status=Thread.Status.IDLE, title=restore.title,
                updated_at=restore.updated_at, last_activity_at=restore.last_activity_at,
            )
    return True

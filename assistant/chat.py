"""POST /api/chat: append the person's message and queue a turn.

One transaction: the thread (created or locked), the message, the turn and,
last, the credit reservation (its account row is locked from its update to
the commit). The turn is enqueued after commit; if the broker can't take it,
everything is undone and the person is told to retry.
"""

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from assistant.card_events import cards_restore, cards_withdraw, events_for_next_turn
from assistant.doors import turn_door
from assistant.history import history_bytes, load_history
from assistant.models import Turn
from assistant.page_context import MARKER as PAGE_CONTEXT_MARKER
from assistant.page_context import PageContext, render_page_context
from assistant_engine.organizations.members import Member
from assistant_engine.organizations.models import Organization
from assistant_engine.providers.catalog import ModelOption
from assistant_engine.providers.org_models import option_for_conversation
from conversations.files import files_claim, files_copy
from conversations.models import Message, Thread
from conversations.selectors import thread_get_for_member
from conversations.services import ConversationBusy, message_append, thread_create
from conversations.titles import derive_title
from credits.services import credits_release, credits_reserve, planned_reservation

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


def chat_submit(member: Member, *, message: str, conversation_id: UUID | None,
                context: PageContext | None = None, attachments: list[UUID] | None = None,
                model: str | None = None, door: str = "") -> SubmittedTurn:
    """Raises ConversationNotFound, ConversationBusy, ConversationFull,
    MemberCapReached, CreditsExhausted, FileNotFound, FileAlreadyAttached or
    ModelNotAllowed (nothing written) or QueueUnavailable (all undone);
    ImproperlyConfigured when the organization's model can't be used.
    `context`: what the person has open (already resolved with their rights),
    told to the model in an events block before the message. `attachments`:
    ids of the person's uploaded files, which the message takes. `model`: the
    conversation's model option from now on ("": the organization's; None: unchanged).
    `door`: where it was asked (a credits.models.Door; assistant/doors.py), for the spend by door."""
    enqueue_error: list[Exception] = []
    created_thread = conversation_id is None
    # The turn id marks the messages the application writes for this turn:
    # history trusts an `event` message only with it (an upsert can't set it).
    turn_id = uuid.uuid4()
    with transaction.atomic():
        thread = _thread_for_chat(member, conversation_id)
        option = _option_for_turn(member, thread, model)
        # Measured before this message is added; only "full" conversations become full.
        used = _history_size(thread) if becomes_full(member, thread) else None
        before = ThreadState.of(thread)
        if not created_thread:
            _deliver_card_events(member, thread, turn_id)
        if context is not None:
            message_append(member, thread=thread, role=Message.Role.EVENT, content=render_page_context(context),
                           turn_id=turn_id)
        user_message = message_append(member, thread=thread, role=Message.Role.USER, content=message,
                                      turn_id=turn_id, responding=True)
        files = files_claim(member, attachments or [], user_message)
        if used is not None:  # a refusal ends this whole transaction (nothing written)
            check_room(used, message, files_bytes=sum(f.model_bytes for f in files))
        now = timezone.now()
        reservation = planned_reservation(now)
        turn = Turn.objects.create(
            id=turn_id, thread=thread, organization_id=member.organization_id, user_id=member.user_id,
            user_message=user_message, model_option=option.id,
            credit_month=reservation.month, reserved_micros=reservation.micros,
            enqueue_attempts=1,  # published right after commit (undone if that fails)
        )
        # Last: its last statement locks the organization's account row until
        # the commit (every submission of the organization waits on it).
        # No savepoint: a refusal ends this whole transaction (nothing written).
        credits_reserve(member, turn_id=turn_id, now=now, savepoint=False, fresh=True, model=option.id,
                        door=turn_door(thread, door))
        transaction.on_commit(lambda: _enqueue_or_note(turn.id, enqueue_error))
    if enqueue_error and chat_undo(turn_id=turn.id, thread_id=thread.id, restore=None if created_thread else before):
        raise QueueUnavailable from enqueue_error[0]
    return SubmittedTurn(thread_id=thread.id, turn_id=turn.id, message_id=user_message.id)


class NothingToRedo(Exception):
    """The conversation has no message of the person to regenerate the reply of, or to edit."""


def chat_regenerate(member: Member, *, conversation_id: UUID, door: str = "") -> SubmittedTurn:
    """A new reply to the last user message, on the same history without the
    old reply: the old reply stays as a previous version (superseded_at).
    Raises ConversationNotFound, ConversationBusy, NothingToRedo,
    CreditsExhausted (nothing written) or QueueUnavailable (all undone)."""
    return _redo(member, conversation_id=conversation_id, new_text=None, door=door)


def chat_edit(member: Member, *, conversation_id: UUID, message: str,
              attachments: list[UUID] | None = None, door: str = "") -> SubmittedTurn:
    """The last user message edited and resent: it and its reply stay as a
    previous version; the new message (`replaces` the old one) gets a turn.
    `attachments`: the files of the old message the new one keeps (None: all);
    FileNotFound or FileNotOfMessage for any other (nothing written)."""
    thread = thread_get_for_member(member, conversation_id)
    if becomes_full(member, thread):
        check_room(history_bytes(load_history(thread.id)), message)
    return _redo(member, conversation_id=conversation_id, new_text=message, keep=attachments, door=door)


def _redo(member: Member, *, conversation_id: UUID, new_text: str | None,
          keep: list[UUID] | None = None, door: str = "") -> SubmittedTurn:
    enqueue_error: list[Exception] = []
    turn_id = uuid.uuid4()  # marks the events block this turn delivers, as in chat_submit
    with transaction.atomic():
        thread = _thread_for_chat(member, conversation_id)
        option = _option_for_turn(member, thread, None)
        before = ThreadState.of(thread)
        last = _last_user_message(thread)
        now = timezone.now()
        # What the model was told (events) stays told: never a previous version.
        replaced = Message.objects.filter(thread=thread, seq__gte=last.seq if new_text else last.seq + 1,
                                          superseded_at__isnull=True).exclude(role=Message.Role.EVENT)
        superseded_ids = list(replaced.values_list("id", flat=True))
        replaced.update(superseded_at=now)
        withdrawn = cards_withdraw(thread.id, superseded_ids, now)
        # Cards decided since the last turn (one of the replaced reply's too, but
        # not the ones withdrawn just now) are told to this turn, as to any new
        # turn: before the edited message, or after the message whose reply is regenerated.
        _deliver_card_events(member, thread, turn_id)
        user_message = last
        if new_text is not None:
            user_message = message_append(member, thread=thread, role=Message.Role.USER, content=new_text,
                                          turn_id=turn_id)
            Message.objects.filter(id=user_message.id).update(replaces=last.client_id)
            # A title derived from the message being edited (the first, never renamed) follows the edit.
            if thread.title and thread.title == derive_title(last.content):
                Thread.objects.filter(id=thread.id).update(title=derive_title(new_text))
            # The edited message keeps its files (those it names, when it does);
            # a refusal ends this whole transaction (nothing written).
            files_copy(member, source=last, message=user_message, keep=keep)
        reservation = planned_reservation(now)
        turn = Turn.objects.create(
            id=turn_id, thread=thread, organization_id=member.organization_id, user_id=member.user_id,
            user_message=user_message, model_option=option.id,
            credit_month=reservation.month, reserved_micros=reservation.micros,
            enqueue_attempts=1,  # published right after commit, as chat_submit's
        )
        Thread.objects.filter(id=thread.id).update(status=Thread.Status.RESPONDING)
        # Last, as in chat_submit: the organization's account row stays locked only to the commit.
        credits_reserve(member, turn_id=turn.id, now=now, fresh=True, model=option.id, door=turn_door(thread, door))
        transaction.on_commit(lambda: _enqueue_or_note(turn.id, enqueue_error))
    if enqueue_error and chat_undo(turn_id=turn.id, thread_id=thread.id, restore=before):
        Message.objects.filter(id__in=superseded_ids).update(superseded_at=None)
        cards_restore(withdrawn)
        raise QueueUnavailable from enqueue_error[0]
    return SubmittedTurn(thread_id=thread.id, turn_id=turn.id, message_id=user_message.client_id)


def _option_for_turn(member: Member, thread: Thread, model: str | None) -> ModelOption:
    """The conversation's model option (checked as still allowed), after
    setting it to `model` when one is given."""
    if model is None or model == thread.model_option:
        return option_for_conversation(member, thread.model_option)
    option = option_for_conversation(member, model)  # refused before anything changes
    thread.model_option = model
    Thread.objects.filter(id=thread.id).update(model_option=model)
    return option


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


def _deliver_card_events(member: Member, thread: Thread, turn_id: UUID) -> Message | None:
    """Cards decided since the last turn reach the model once, as an `event`
    message placed before (apart from) the person's new text."""
    block = events_for_next_turn(thread.id)
    if not block:
        return None
    return message_append(member, thread=thread, role=Message.Role.EVENT, content=block, turn_id=turn_id)


def becomes_full(member: Member, thread: Thread) -> bool:
    """Whether the conversation can be full: under the organization's "full"
    choice (Organization.HistoryMode), and never a continuous one (Telegram)."""
    if thread.continuous:
        return False
    terms = member.terms
    mode = terms.history_mode if terms else Organization.objects.values_list(
        "history_mode", flat=True).get(pk=member.organization_id)
    return mode == Organization.HistoryMode.FULL


def _history_size(thread: Thread) -> int:
    """The size the thread keeps (its last turn's end measured it), so the
    history itself is not read here; measured once when unknown (rewritten by
    an upsert, or its last turn never finished)."""
    if thread.history_bytes is None:
        return history_bytes(load_history(thread.id))
    return thread.history_bytes


def check_room(used: int, message: str, *, files_bytes: int = 0) -> None:
    """`files_bytes`: what the message's files weigh for the model (Attachment.model_bytes)."""
    if used + len(message.encode()) + files_bytes > settings.ASSISTANT_HISTORY_BYTES:
        raise ConversationFull


def _enqueue_or_note(turn_id: UUID, errors: list[Exception]) -> None:
    try:
        enqueue_turn(turn_id)
    except Exception as error:  # any broker failure: the caller undoes the turn
        logger.warning("turn_enqueue_failed", extra={"turn_id": str(turn_id), "error_type": type(error).__name__})
        errors.append(error)


def enqueue_turn(turn_id: UUID) -> None:
    from assistant.tasks import run_turn_task
    from assistant_engine.foundation.broker_folders import ensure_broker_folders

    ensure_broker_folders()
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
        # The card events block stays: its cards are marked delivered, and the
        # next turn of this thread must still see it. A page context goes: the
        # next message says again what is open then.
        card_events = Q(role=Message.Role.EVENT) & ~Q(content__contains=PAGE_CONTEXT_MARKER)
        Message.objects.filter(turn_id=turn_id).exclude(card_events).delete()
        turn.delete()
        if restore is None:
            Thread.objects.filter(id=thread_id).delete()
        else:
            Thread.objects.filter(id=thread_id).update(
                status=Thread.Status.IDLE, title=restore.title,
                updated_at=restore.updated_at, last_activity_at=restore.last_activity_at,
            )
    return True

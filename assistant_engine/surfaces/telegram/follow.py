"""Streaming a turn's reply into the chat while the worker writes it.

"typing…" while it runs, the reply sent with sendMessage and updated with
editMessageText at most once per TELEGRAM_EDIT_INTERVAL_MS (Telegram allows
about one edit a second per chat), new chunks past 4,096 as new messages,
each card as its messages (replies.card_messages), Confirm / Cancel on the
last. What was sent is recorded after each call (StreamedReply), so a
retried task (429, network) goes on from there instead of sending twice.
"""

import logging
import time
from collections.abc import Callable
from datetime import timedelta
from uuid import UUID

from django.conf import settings
from django.utils import timezone, translation

from assistant.models import ActionCard
from assistant_engine.surfaces.telegram import bot
from assistant_engine.surfaces.telegram.language import supported
from assistant_engine.surfaces.telegram.models import StreamedReply
from assistant_engine.surfaces.telegram.replies import TurnView, card_messages, chunk_hash, turn_view
from assistant_engine.surfaces.telegram.services import card_buttons

logger = logging.getLogger("assistant_engine.surfaces.telegram")

POLL_SECONDS = 0.25
# Telegram shows "typing…" for 5 seconds after each sendChatAction.
TYPING_SECONDS = 4.0


def follow_turn(turn_id: UUID, *, slice_seconds: float, sleep: Callable[[float], None] = time.sleep,
                clock: Callable[[], float] = time.monotonic, language: str = "") -> bool:
    """Follow the turn for at most `slice_seconds`; True when it is not
    delivered yet (the task enqueues itself again, so a single worker process
    is never held by one chat while the turn waits in the queue). Everything
    sent is rendered in `language`, the update's (handlers.handle_update), and
    the worker thread's language is restored after."""
    reply = StreamedReply.objects.filter(turn_id=turn_id).first()
    if reply is None:
        return False
    with translation.override(supported(language) or settings.LANGUAGE_CODE):
        return _follow(reply, turn_id, slice_seconds, sleep, clock)


def _follow(reply: StreamedReply, turn_id: UUID, slice_seconds: float, sleep: Callable[[float], None],
            clock: Callable[[], float]) -> bool:
    started, typed_at = clock(), None
    while True:
        view = turn_view(turn_id)
        if not view.ended and (typed_at is None or clock() - typed_at >= TYPING_SECONDS):
            bot.run(lambda b: bot.typing(b, reply.chat_id))
            typed_at = clock()
        if _due(reply):
            _push(reply, view)
        if view.ended and _delivered(reply, view):
            reply.delete()
            logger.info("telegram_reply_delivered", extra={"turn_id": str(turn_id),
                                                           "messages": len(view.chunks), "cards": len(view.cards)})
            return False
        if clock() - started >= slice_seconds:
            return True
        sleep(POLL_SECONDS)


def _due(reply: StreamedReply) -> bool:
    interval = timedelta(milliseconds=settings.TELEGRAM_EDIT_INTERVAL_MS)
    return reply.last_edit_at is None or timezone.now() - reply.last_edit_at >= interval


def _delivered(reply: StreamedReply, view: TurnView) -> bool:
    return reply.chunk_hashes == [chunk_hash(c) for c in view.chunks] and all(
        len(_sent_of(reply, card)) >= len(card_messages(card)) for card in view.cards
    )


def _push(reply: StreamedReply, view: TurnView) -> None:
    """One round of calls, each recorded as soon as Telegram took it."""
    changed = False
    for index, chunk in enumerate(view.chunks):
        digest = chunk_hash(chunk)
        if index < len(reply.message_ids):
            if reply.chunk_hashes[index] == digest:
                continue
            bot.run(lambda b, i=index, c=chunk: bot.edit_html(b, reply.chat_id, reply.message_ids[i], c))
            reply.chunk_hashes[index] = digest
        else:
            message_id = bot.run(lambda b, c=chunk: bot.send_html(b, reply.chat_id, c))
            reply.message_ids.append(message_id)
            reply.chunk_hashes.append(digest)
        changed = True
        _save(reply)
    for card in view.cards:
        changed = _send_card(reply, card) or changed
    if changed:
        reply.last_edit_at = timezone.now()
        reply.save(update_fields=["last_edit_at"])


def _sent_of(reply: StreamedReply, card: ActionCard) -> list[int]:
    """The ids of the card's messages sent so far (one id: a card sent whole
    as one message before cards could span several)."""
    sent = reply.card_messages.get(str(card.id), [])
    return [sent] if isinstance(sent, int) else sent


def _send_card(reply: StreamedReply, card: ActionCard) -> bool:
    """Send what is left of the card, each message recorded once Telegram took it."""
    chunks, sent = card_messages(card), _sent_of(reply, card)
    before = len(sent)
    for index in range(before, len(chunks)):
        last = index == len(chunks) - 1
        buttons = card_buttons(card) if last and card.status == ActionCard.Status.PENDING else None
        sent.append(bot.run(lambda b, c=chunks[index], k=buttons: bot.send_html(b, reply.chat_id, c, k)))
        reply.card_messages[str(card.id)] = sent
        _save(reply)
    return len(sent) > before


def _save(reply: StreamedReply) -> None:
    reply.save(update_fields=["message_ids", "chunk_hashes", "card_messages"])

"""Cards as application events: what the next turn's model is told of the
decisions taken since (confirmed, cancelled, expired, failed, interrupted), in
its own `<application_events>` block, and the cards a redo withdraws."""

import json
from datetime import datetime
from uuid import UUID

from django.utils import timezone

from assistant.app_events import render_events
from assistant.models import ActionCard
from assistant_engine.tools import model_text

Status = ActionCard.Status

# A pending card of a reply the person regenerated or edited (cards_withdraw).
WITHDRAWN_ERROR = "Withdrawn: the reply that proposed it was regenerated or edited before anyone decided."
# Bound of what an event tells the model about a card.
MAX_SUMMARY_CHARS = 2000


def cards_withdraw(thread_id: UUID, message_ids: list[UUID], now: datetime) -> list[UUID]:
    """The pending cards proposed in these (superseded) replies, withdrawn:
    regenerating or editing replaces what the reply proposed, so a card left
    pending there can't do a second time what the new version proposes again.
    Never told to the model (the proposal is no longer in what it is sent).
    Call it under the thread's lock; a confirm that took a card's row first
    keeps it (this update skips rows no longer pending). Returns their ids."""
    cards = ActionCard.objects.filter(thread_id=thread_id, status=Status.PENDING, tool_call__message_id__in=message_ids)
    withdrawn = list(cards.values_list("id", flat=True))
    ActionCard.objects.filter(id__in=withdrawn, status=Status.PENDING).update(
        status=Status.CANCELLED, decided_at=now, error=WITHDRAWN_ERROR, event_delivered_at=now)
    return withdrawn


def cards_restore(card_ids: list[UUID]) -> None:
    """Undo cards_withdraw (the redo that withdrew them was undone)."""
    ActionCard.objects.filter(id__in=card_ids, error=WITHDRAWN_ERROR).update(
        status=Status.PENDING, decided_at=None, error="", event_delivered_at=None)


def events_for_next_turn(thread_id: UUID, *, now: datetime | None = None) -> str:
    """The thread's decisions not yet told to the model, as one rendered
    `<application_events>` block, now marked delivered; "" when there are none.

    Call it inside the transaction that stores the block (chat_submit's), so
    that a rollback leaves the events undelivered.
    """
    now = now or timezone.now()
    # Lock the rows: a card whose outcome is being recorded right now is told
    # either in this block or in the next one, never lost between the two.
    cards = list(
        ActionCard.objects.select_for_update()
        .filter(thread_id=thread_id, event_delivered_at__isnull=True)
        .exclude(status=Status.PENDING)
        .order_by("decided_at", "created_at", "id")
    )
    if not cards:
        return ""
    ActionCard.objects.filter(id__in=[card.id for card in cards]).update(event_delivered_at=now)
    return render_events(card_event(card) for card in cards)


def card_event(card: ActionCard) -> dict[str, str]:
    """The fields of one event (render_events neutralizes and serializes them)."""
    return {
        "kind": card.status,
        "card_id": str(card.id),
        "tool_name": card.tool_name,
        "summary": model_text.bound_for_model(_summary(card), MAX_SUMMARY_CHARS),
        "input": model_text.bound_for_model(
            json.dumps(card.tool_input, ensure_ascii=False, sort_keys=True, separators=(",", ":")), MAX_SUMMARY_CHARS),
    }


def _summary(card: ActionCard) -> str:
    what = card.description.rstrip(".")
    if card.status == Status.CONFIRMED and card.result is None:
        return f"Confirmed by the person, still being carried out: {what}."
    if card.status == Status.CONFIRMED:
        result = json.dumps(card.result, ensure_ascii=False, separators=(",", ":"))
        return f"Confirmed by the person and done: {what}. Result: {result}"
    if card.status == Status.CANCELLED:
        return f"Cancelled by the person, nothing was done: {what}."
    if card.status == Status.EXPIRED:
        return f"Expired without a decision, nothing was done: {what}."
    if card.status == Status.OUTCOME_UNKNOWN:
        return (
            f"Confirmed by the person, but interrupted before its outcome was recorded; it may or may not "
            f"have been done, and it was not retried: {what}. Do not repeat it without asking the person."
        )
    return f"Not done: {what}. Reason: {card.error}"

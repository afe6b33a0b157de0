"""No effect twice: the cards of a conversation with the same fingerprint
(assistant.fingerprint: same tool, input and data) as one already confirmed."""

from datetime import datetime

from assistant.models import ActionCard

Status = ActionCard.Status
# A card whose effect was done (or may have been): what a twin would repeat.
DONE_STATUSES = (Status.CONFIRMED, Status.OUTCOME_UNKNOWN)


def identical_done_at(*, thread_id, snapshot_hash: str, exclude_id=None) -> datetime | None:
    """When a card of this conversation with this fingerprint was confirmed; None if never."""
    twins = ActionCard.objects.filter(thread_id=thread_id, snapshot_hash=snapshot_hash, status__in=DONE_STATUSES)
    if exclude_id is not None:
        twins = twins.exclude(id=exclude_id)
    return twins.order_by("decided_at").values_list("decided_at", flat=True).first()


def mark_pending_twins(card: ActionCard) -> None:
    """Once `card` is confirmed, its pending twins would repeat it: say so on them."""
    ActionCard.objects.filter(
        thread_id=card.thread_id, snapshot_hash=card.snapshot_hash, status=Status.PENDING,
        identical_done_at__isnull=True,
    ).exclude(id=card.id).update(identical_done_at=card.decided_at)

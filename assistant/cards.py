"""Deciding confirmation cards (confirm, cancel, expire) and telling the model.

Tools propose, people decide. A card leaves `pending` once, under a lock of
its row, by the person's click (confirmed, cancelled), by finding at the click
that it no longer holds (expired, failed) or by the expiry sweep. Only the
request that moved it from `pending` to `confirmed` runs the action, and it
runs it after that claim has committed: a send does slow I/O (mail) that must
not hold a transaction, and "at most once" still holds because no other
request can claim the card again.

The fingerprint is checked twice: at the click (to refuse at once) and again
in the perform step, right before the action (and, for a `confirm` tool, in
the same transaction as it), so data edited between the claim and the action
is caught. An action cut short (its process killed after the claim, before
its outcome was recorded) is never retried, since a mail must not go out twice:
`cards_mark_interrupted` turns such a card `outcome_unknown` after
ASSISTANT_CARD_OUTCOME_TIMEOUT_SECONDS, and the model hears of it.

Every decision is an application event (assistant.card_events): the card's
`event_delivered_at` stays null until the next turn of its thread has been
given the event.
"""

import logging
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from assistant.fingerprint import snapshot_hash
from assistant.models import ActionCard
from assistant.progress import card_json
from assistant.repeats import identical_done_at, mark_pending_twins
from assistant.selectors import cards_of
from assistant_engine.organizations.members import Member
from assistant_engine.tools import framework
from assistant_engine.tools.registry import get_tool
from conversations.models import Thread

logger = logging.getLogger("assistant.cards")

Status = ActionCard.Status

STALE_ERROR = (
    "What this card would do changed after it was proposed (what it touches was edited or is gone), "
    "so nothing was done. The person can ask again."
)
PERFORM_CRASHED = "The action failed unexpectedly; it may not have been completed."
INTERRUPTED_ERROR = (
    "The action was interrupted before its outcome was recorded: it may or may not have been done. "
    "It was not retried."
)
# Bound of the error a card keeps (and an event tells the model).
MAX_ERROR_CHARS = 500


class CardNotFound(Exception):
    """No such card, or not this person's: the same answer for both."""


class CardRefused(Exception):
    """The card can't be decided as asked; nothing was performed. Carries the card as it now is."""

    def __init__(self, card: ActionCard):
        super().__init__(str(card.id))
        self.card = card


class CardDecided(CardRefused):
    """Already confirmed, cancelled, failed or expired."""


class CardExpired(CardRefused):
    """Past `expires_at`; the refusal has marked it expired."""


class CardRepeat(CardRefused):
    """An identical action was already confirmed in this conversation and the
    click did not acknowledge it: the card stays pending, now saying so."""


class CardNeedsPerson(CardRefused):
    """Confirmed with an API token in a conversation whose cards a program
    proposes while holding the person's token (MCP): that program could
    confirm its own proposal. Only the person, signed in, decides it."""


# Surfaces whose cards are decided by the person only, never with an API
# token; the doors above the engine register themselves (surfaces.mcp).
PERSON_ONLY_SURFACES: set[str] = set()


def decide_in_person_only(surface: str) -> None:
    PERSON_ONLY_SURFACES.add(surface)


class CardStale(CardRefused):
    """The fingerprint differs from what the person was shown.

    `changed`: the current data no longer matches what was proposed, so the
    card can never be confirmed and the refusal has marked it failed (the
    person asks again and gets a new card). Otherwise only the client's hash
    was wrong (an old page, a forged request): the card stays pending.
    """

    def __init__(self, card: ActionCard, *, changed: bool):
        super().__init__(card)
        self.changed = changed


# --- Reads ---------------------------------------------------------------------


def card_get_for_member(member: Member, card_id: UUID) -> ActionCard:
    card = cards_of(member).select_related("tool_call").filter(id=card_id).first()
    if card is None:
        raise CardNotFound
    return card


def thread_cards_json(thread: Thread) -> list[dict]:
    """The cards of a thread, oldest first, in one query (for GET /api/conversations/{id})."""
    cards = (
        ActionCard.objects.filter(
            thread_id=thread.id, organization_id=thread.organization_id, user_id=thread.user_id
        )
        .select_related("tool_call")
        .order_by("created_at", "id")
    )
    return [card_json(card) for card in cards]


def _locked_card(member: Member, card_id: UUID) -> ActionCard:
    """The card with its row locked; the caller holds the transaction."""
    card = cards_of(member).select_for_update().filter(id=card_id).first()
    if card is None:
        raise CardNotFound
    return card


def _locked_card_and_twins(member: Member, card_id: UUID) -> tuple[ActionCard, str]:
    """The card with its row locked, as _locked_card, after the rows of its
    pending twins (same conversation and fingerprint), all in id order.

    Race: two twins clicked at once (two tabs). Each claim writes the other
    (mark_pending_twins): locking only its own row first, each waited for the
    other's, a deadlock that failed one click. In one order, the second
    waits for the first to commit, then finds it done (CardRepeat).
    Also returns the surface of the card's conversation.
    """
    mine = cards_of(member)
    found = mine.filter(id=card_id).values_list("thread_id", "snapshot_hash", "thread__surface").first()
    if found is None:
        raise CardNotFound
    thread_id, fingerprint, surface = found
    twins = mine.filter(thread_id=thread_id, snapshot_hash=fingerprint, status=Status.PENDING)
    list((twins | mine.filter(id=card_id)).select_for_update().order_by("id").values_list("id", flat=True))
    return _locked_card(member, card_id), surface


# --- Checks (no writes) ----------------------------------------------------------


def check_pending(card: ActionCard, now: datetime) -> None:
    if card.status != Status.PENDING:
        raise CardDecided(card)
    if card.expires_at <= now:
        raise CardExpired(card)


def check_confirmable(
    member: Member, card: ActionCard, *, shown_hash: str, now: datetime, acknowledged_repeat: bool = False
) -> None:
    """Pending, unexpired, described again from current data to the very
    fingerprint that was stored and that the person was shown, and, when it
    would repeat an effect already done in its conversation, acknowledged so."""
    check_pending(card, now)
    if current_fingerprint(member, card) != card.snapshot_hash:
        raise CardStale(card, changed=True)
    if shown_hash != card.snapshot_hash:
        raise CardStale(card, changed=False)
    done_at = identical_done_at(thread_id=card.thread_id, snapshot_hash=card.snapshot_hash, exclude_id=card.id)
    if done_at is not None and not acknowledged_repeat:
        card.identical_done_at = done_at
        raise CardRepeat(card)


def current_fingerprint(member: Member, card: ActionCard) -> str | None:
    """The card's fingerprint from the data as it is now; None if it can no
    longer be described (the tool is gone, the target is not the person's
    any more, the stored input no longer fits the tool)."""
    try:
        tool = get_tool(card.tool_name)
        if tool.tool_class == "read":  # a write is held after third-party content (trifecta.route_call)
            return None
        tool_input = framework.parse_input(tool, card.tool_input)
        description = framework.describe(tool, member, tool_input)
    except framework.ToolError:
        return None
    # The same arguments as proposals.propose used for the stored hash.
    return snapshot_hash(tool.name, tool_input.model_dump(mode="json"), description.snapshot)


# --- Decisions -------------------------------------------------------------------


def card_confirm(
    member: Member, *, card_id: UUID, shown_hash: str, acknowledged_repeat: bool = False,
    with_token: bool = False, now: datetime | None = None,
) -> ActionCard:
    """Perform the card's action, once, if it is still exactly what the person was shown.

    Raises CardNotFound, CardDecided, CardExpired (the card is now expired),
    CardStale (failed when the data changed; untouched when only `shown_hash`
    differs) or CardRepeat (an identical action was done in the conversation
    and `acknowledged_repeat` is false) or CardNeedsPerson (`with_token`, the
    request's credential an API token, on a card of a PERSON_ONLY_SURFACES
    conversation); then nothing was performed.
    """
    now = now or timezone.now()
    with transaction.atomic():
        # Lock the row: two clicks (or two tabs) confirming at once must not
        # both find it pending; the second waits, then sees it decided.
        card, surface = _locked_card_and_twins(member, card_id)
        if with_token and surface in PERSON_ONLY_SURFACES:
            refusal = CardNeedsPerson(card)
        else:
            refusal = _refusal_or_none(lambda: check_confirmable(
                member, card, shown_hash=shown_hash, now=now, acknowledged_repeat=acknowledged_repeat))
        if refusal is None:
            _decide(card, Status.CONFIRMED, now)  # the claim: from here on, only this request performs
            mark_pending_twins(card)
        else:
            _record_refusal(refusal, now)
    if refusal is not None:
        raise refusal
    _perform_and_record(member, card)
    return card_get_for_member(member, card.id)


def card_cancel(member: Member, *, card_id: UUID, now: datetime | None = None) -> ActionCard:
    """Raises CardNotFound, CardDecided or CardExpired (the card is now expired)."""
    now = now or timezone.now()
    with transaction.atomic():
        # Lock the row: a cancel racing a confirm must not undo a claim.
        card = _locked_card(member, card_id)
        refusal = _refusal_or_none(lambda: check_pending(card, now))
        if refusal is None:
            _decide(card, Status.CANCELLED, now)
        else:
            _record_refusal(refusal, now)
    if refusal is not None:
        raise refusal
    return card_get_for_member(member, card.id)


def cards_expire(now: datetime | None = None) -> int:
    """Mark pending cards past `expires_at` expired, each with its event; how many."""
    now = now or timezone.now()
    # One conditional UPDATE: two sweepers at once (or a sweep and a click)
    # can't decide a card twice; on PostgreSQL the second waits for the row
    # lock, re-reads the status and skips it.
    return ActionCard.objects.filter(status=Status.PENDING, expires_at__lte=now).update(
        status=Status.EXPIRED, decided_at=now, event_delivered_at=None
    )


def cards_mark_interrupted(now: datetime | None = None) -> int:
    """Mark `outcome_unknown` the confirmed cards whose action was cut short
    (no outcome recorded ASSISTANT_CARD_OUTCOME_TIMEOUT_SECONDS after the
    click), each with its event; how many. Never retried: the action may
    have happened (a mail may have gone out)."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.ASSISTANT_CARD_OUTCOME_TIMEOUT_SECONDS)
    # One conditional UPDATE: an outcome recorded at the same moment (its row
    # locked) either lands first, and the card no longer matches, or after,
    # and _record_outcome replaces the unknown with the truth.
    count = ActionCard.objects.filter(status=Status.CONFIRMED, result__isnull=True, decided_at__lt=cutoff).update(
        status=Status.OUTCOME_UNKNOWN, error=INTERRUPTED_ERROR, event_delivered_at=None
    )
    if count:
        logger.warning("cards_interrupted", extra={"count": count})
    return count


def _refusal_or_none(check) -> CardRefused | None:
    try:
        check()
    except CardRefused as refusal:
        return refusal
    return None


def _record_refusal(refusal: CardRefused, now: datetime) -> None:
    """What a refusal leaves behind: an expired card expires, a card whose data
    changed fails (it could never be confirmed again); nothing else changes."""
    if isinstance(refusal, CardExpired):
        _decide(refusal.card, Status.EXPIRED, now)
    elif isinstance(refusal, CardStale) and refusal.changed:
        _decide(refusal.card, Status.FAILED, now, error=STALE_ERROR)
    elif isinstance(refusal, CardRepeat):  # from now on the card says what it would repeat
        refusal.card.save(update_fields=["identical_done_at"])


def _decide(card: ActionCard, status: str, now: datetime, *, error: str = "") -> None:
    """Needs the card's row locked by the caller."""
    card.status = status
    card.decided_at = now
    card.error = error
    card.event_delivered_at = None  # a new decision is a new event for the model
    card.save(update_fields=["status", "decided_at", "error", "event_delivered_at"])


class _ChangedSinceClaim(Exception):
    """The fingerprint no longer matches at the moment of the action."""


def _perform_and_record(member: Member, card: ActionCard) -> None:
    """Run the claimed action, then record how it went."""
    try:
        tool = get_tool(card.tool_name)
        result = _perform_if_unchanged(member, card, tool)
    except _ChangedSinceClaim:
        _record_outcome(card.id, error=STALE_ERROR)
    except framework.ToolError as error:
        _record_outcome(card.id, error=(str(error) or type(error).__name__)[:MAX_ERROR_CHARS])
    except Exception as error:
        # By kind only: the message of an unexpected error may carry the
        # person's data or a server's details.
        logger.error(
            "card_perform_crashed",
            extra={"card_id": str(card.id), "tool": card.tool_name, "error_type": type(error).__name__},
        )
        _record_outcome(card.id, error=PERFORM_CRASHED)
    else:
        _record_outcome(card.id, result=result)


def _perform_if_unchanged(member: Member, card: ActionCard, tool) -> Any:
    """Describe the card again right before acting, so that what changed
    between the click's check and now (a note edited meanwhile) stops it.

    A `confirm` tool acts on the product's own data: the check and the action
    share one transaction. On SQLite (whose transactions take the write lock
    first) nothing can be written between them; on PostgreSQL a write that
    commits between the check's reads and the action's statements could still
    slip through, a window of a few statements instead of click-to-action. A
    `send` tool does slow I/O that must not hold a transaction: its check
    comes just before.
    """
    if tool.tool_class == "send":
        _check_unchanged(member, card)
        return framework.perform(tool, member, card.tool_input)
    with transaction.atomic():
        _check_unchanged(member, card)
        return framework.perform(tool, member, card.tool_input)


def _check_unchanged(member: Member, card: ActionCard) -> None:
    if current_fingerprint(member, card) != card.snapshot_hash:
        raise _ChangedSinceClaim


def _record_outcome(card_id: UUID, *, result: Any = None, error: str = "") -> None:
    with transaction.atomic():
        # Lock the row: a turn starting now either delivers the event before
        # this outcome (and the outcome becomes a new event) or after it.
        card = ActionCard.objects.select_for_update().filter(id=card_id).first()
        if card is None:  # its conversation was deleted (another tab) while the action ran
            return
        if card.status == Status.OUTCOME_UNKNOWN:
            # The sweep gave up on this action too early; the truth replaces
            # the unknown (and is told to the model as a new event).
            card.status = Status.CONFIRMED
            card.error = ""
        if error:
            card.status = Status.FAILED
            card.error = error
        else:
            card.result = {} if result is None else result  # None would read as "still being carried out"
        card.event_delivered_at = None
        card.save(update_fields=["status", "error", "result", "event_delivered_at"])

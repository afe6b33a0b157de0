"""Stopping a turn: POST /api/turns/{id}/cancel (the browser's Stop; Telegram and MCP reuse it).

A queued turn is ended here and now, at no cost: no worker has claimed it,
and the row lock makes sure none claims it meanwhile (a claim is a
conditional update of a queued row). A running turn only gets a flag: its
worker ends it at the loop's next safe point (assistant/turn/state.py
`_stop_if_cancelled`), keeping the text so far and settling what was spent.
"""

import logging
from dataclasses import dataclass
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from assistant.models import ENDED_STATUSES, Turn
from assistant.selectors import TurnNotFound, turns_of
from assistant.turn.outcome import CANCELLED_NOTICE, Outcome
from assistant.turn.settle import RELEASE, finish_turn
from assistant_engine.organizations.members import Member

logger = logging.getLogger("assistant.turn")


class TurnEnded(Exception):
    """The turn had already ended (done, failed or cancelled): nothing to stop."""


@dataclass(frozen=True)
class CancelResult:
    turn_id: UUID
    status: str  # `cancelled` (a queued turn, at once) or `running` (its worker stops it soon)


def turn_cancel(member: Member, *, turn_id: UUID) -> CancelResult:
    """Raises TurnNotFound (not this person's) or TurnEnded. Asking twice
    while the worker has not stopped yet answers the same."""
    with transaction.atomic():
        # Lock the turn: a worker's claim (queued → running) and this cancel can't both win.
        turn = turns_of(member).select_for_update().filter(id=turn_id).first()
        if turn is None:
            raise TurnNotFound
        check_not_ended(turn)
        if turn.status == Turn.Status.QUEUED:
            finish_turn(turn.id, Outcome(Turn.Status.CANCELLED, "", CANCELLED_NOTICE), usage=None,
                        credits=RELEASE, expect_status=Turn.Status.QUEUED, job="turn_cancel")
            status = Turn.Status.CANCELLED
        else:
            if turn.cancel_requested_at is None:
                turn.cancel_requested_at = timezone.now()
                turn.save(update_fields=["cancel_requested_at"])
            status = Turn.Status.RUNNING
    logger.info("turn_cancel_requested", extra={"turn_id": str(turn_id), "status": status})
    return CancelResult(turn_id=turn_id, status=status)


def check_not_ended(turn: Turn) -> None:
    if turn.status in ENDED_STATUSES:
        raise TurnEnded

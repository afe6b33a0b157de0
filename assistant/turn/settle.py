"""Phase 4, settle: record the turn's end, free its thread and close its
credits in one transaction under the turn's row lock (finish_turn). The loop
calls it once its steps end; the Stop, the stuck-turn and the queue sweepers
call it too."""

import logging
from dataclasses import dataclass, replace
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from assistant import live
from assistant.models import ENDED_STATUSES, Turn
from assistant.turn.outcome import CANCELLED_NOTICE, Outcome
from assistant_engine.foundation.prepared import PreparedUpdate
from assistant_engine.providers.catalog import model_option
from assistant_engine.providers.clients.base import Usage
from assistant_engine.providers.org_models import DEPLOYMENT
from conversations.models import Message, Thread
from conversations.versions import version_after_sql
from credits.money import charged_micros, request_micros
from credits.services import credits_keep_on_stuck, credits_release, credits_settle

logger = logging.getLogger("assistant.turn")

# How finish_turn closes a turn's credits.
SETTLE = "settle"  # the real cost (the turn ran)
STUCK = "stuck"  # the reservation kept as cost (the turn never finished: a killed worker)
RELEASE = "release"  # no cost (no model call was ever made)


@dataclass(frozen=True)
class ThreadAfterTurn:
    """What the loop knows of its thread at the end: the next seq, the
    history's size for the model (None: unknown) and the turn's last reply."""

    next_seq: int
    history_bytes: int | None
    last_reply_id: UUID | None


def finish_turn(
    turn_id: UUID, outcome: Outcome, *, usage: Usage | None, cost_micros: int | None = None,
    credits: str = SETTLE, expect_status: str | None = None, job: str = "run_turn",
    thread_after: ThreadAfterTurn | None = None, progress: dict | None = None, key_source: str = "",
    loop_turn: Turn | None = None,
) -> bool:
    """Record the end, free the thread and close the credits, all at once.

    `usage=None` keeps the usage the turn stored as it went. `thread_after`:
    what the loop knows of the thread; without it (a sweeper) the next seq is
    measured and the history's size marked unknown. With
    `expect_status`, only a turn still in that status is finished. Returns
    whether this call finished the turn: under the turn's row lock, a second
    caller (a redelivered task, a second sweeper) finds it finished and does
    nothing. `key_source` (which key paid) is recorded with the end, in the
    same write. `loop_turn`: the loop's own Turn (its model, thread and
    reservation as it ran), for a turn ended without a Stop in one UPDATE.
    """
    if credits not in (SETTLE, STUCK, RELEASE):
        raise ValueError(f"unknown way to close credits: {credits!r}")
    now = timezone.now()
    held = _LoopHeld(usage, progress, key_source)
    with transaction.atomic():
        ended = None
        if loop_turn is not None and cost_micros is None and expect_status is None:
            ended = _ended_at_once(loop_turn, outcome, held, credits, now=now)
        ended = ended or _ended_under_lock(turn_id, outcome, held, credits, now=now, cost_micros=cost_micros,
                                           expect_status=expect_status)
        if ended is None:
            return False
        turn, outcome = ended
        cost_micros = turn.cost_micros
        thread_after = thread_after or _measured_thread(turn)
        if outcome.notice:
            thread_after = _mark_last_reply(turn, outcome, thread_after)
        _free_thread(turn.thread_id, now, thread_after.next_seq, thread_after.history_bytes)
        _close_credits(turn, credits, cost_micros=cost_micros, job=job)
    live.publish_turn_ended(turn_id)
    return True


@dataclass(frozen=True)
class _LoopHeld:
    """What the loop held at its end and had not written: its usage (None: as
    stored), the last step's progress, the key that paid."""

    usage: Usage | None
    progress: dict | None
    key_source: str


def _ended_at_once(turn: Turn, outcome: Outcome, held: _LoopHeld, credits: str, *, now) -> tuple[Turn, Outcome] | None:
    """The loop's turn ended by one conditional UPDATE, which takes the row
    lock a Stop (turn_cancel) and the sweepers take: it writes only a turn
    still running and without a Stop, so a Stop accepted first, or a sweeper
    that ended it, makes it write nothing (None: the locked path then decides)."""
    _take_what_the_loop_held(turn, held)
    turn.status, turn.failure_kind, turn.finished_at = outcome.status, outcome.failure_kind, now
    turn.cost_micros = _cost_of(turn, credits)
    written = _end_unless_stopped(turn.id, *(getattr(turn, field) for field in ENDING_FIELDS))
    return (turn, outcome) if written else None


def _ended_under_lock(turn_id: UUID, outcome: Outcome, held: _LoopHeld, credits: str, *, now,
                      cost_micros: int | None, expect_status: str | None) -> tuple[Turn, Outcome] | None:
    """The turn read under its row lock and ended, unless it already was (None);
    with the outcome it ended with (a Stop accepted first wins)."""
    turn = Turn.objects.select_for_update().get(id=turn_id)
    if turn.status in ENDED_STATUSES:
        return None
    if expect_status is not None and turn.status != expect_status:
        return None
    outcome = _after_a_stop(turn, outcome)
    _take_what_the_loop_held(turn, held)
    turn.status, turn.failure_kind, turn.finished_at = outcome.status, outcome.failure_kind, now
    turn.cost_micros = _cost_of(turn, credits) if cost_micros is None else cost_micros
    turn.save()
    return turn, outcome


def _take_what_the_loop_held(turn: Turn, held: _LoopHeld) -> None:
    if held.usage is not None:
        store_usage(turn, held.usage)
    for field, value in (held.progress or {}).items():  # the last step's, not written yet
        setattr(turn, field, value)
    if held.key_source:
        turn.key_source = held.key_source


def _cost_of(turn: Turn, credits: str) -> int:
    if credits == SETTLE:
        return request_micros(model_option(turn.model_option), _usage_of(turn))
    return turn.reserved_micros if credits == STUCK else 0


def _close_credits(turn: Turn, credits: str, *, cost_micros: int, job: str) -> None:
    if credits == SETTLE:
        # On the deployment's key the cost is the charge ("turn cost"); on the organization's own
        # key the entry says both (the provider's cost, the share charged).
        charged = charge_for(turn, cost_micros) if own_key(turn) else None
        credits_settle(turn_id=turn.id, cost_micros=cost_micros, charged_micros=charged, job=job)
    elif credits == STUCK:
        credits_keep_on_stuck(turn_id=turn.id, job=job)
    else:
        credits_release(turn_id=turn.id, reason="the turn never started", job=job)


def _after_a_stop(turn: Turn, outcome: Outcome) -> Outcome:
    """A Stop the person was told was accepted (turn_cancel's 202) wins over
    whatever the loop reached meanwhile, however fast the model finished:
    both take the turn's row lock, so either the Stop came first and the turn
    ends cancelled (its text kept), or the turn had ended and the Stop is
    refused (409 turn_ended)."""
    if turn.cancel_requested_at is None or outcome.status == Turn.Status.CANCELLED:
        return outcome
    logger.info("turn_cancel_settled", extra={"turn_id": str(turn.id), "reached": outcome.status})
    return Outcome(Turn.Status.CANCELLED, "", CANCELLED_NOTICE)


def own_key(turn: Turn) -> bool:
    return bool(turn.key_source) and turn.key_source != DEPLOYMENT


def charge_for(turn: Turn, cost_micros: int) -> int:
    """What the turn is charged in credits: its cost, or CREDITS_OWN_KEY_RATE of
    it when the organization's own key paid the provider."""
    return charged_micros(cost_micros, settings.CREDITS_OWN_KEY_RATE) if own_key(turn) else cost_micros


def _usage_of(turn: Turn) -> Usage:
    return Usage(turn.input_tokens, turn.output_tokens, turn.cache_write_tokens, turn.cache_read_tokens)


USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens")
# The loop's counters (TurnState.progress): written each step, and with the turn's end.
PROGRESS_FIELDS = ("steps", "tool_calls", "reserved_micros", "read_private", "read_untrusted")
# What a turn's end writes: its status, its cost, and what the loop held (usage, progress, key).
ENDING_FIELDS = ("status", "failure_kind", "finished_at", "cost_micros", *USAGE_FIELDS, *PROGRESS_FIELDS,
                 "key_source")


# Every turn's end runs these two: compiled once (assistant_engine.foundation.prepared).
_end_unless_stopped = PreparedUpdate(
    Turn,
    lambda turn_id, *values: (
        Turn.objects.filter(id=turn_id, status=Turn.Status.RUNNING, cancel_requested_at__isnull=True),
        dict(zip(ENDING_FIELDS, values, strict=True))),
    Turn._meta.pk, *(Turn._meta.get_field(field) for field in ENDING_FIELDS),
)
_free_thread = PreparedUpdate(
    Thread,
    lambda thread_id, now, next_seq, history_bytes: (
        Thread.objects.filter(id=thread_id),
        {"status": Thread.Status.IDLE, "updated_at": version_after_sql(now), "last_activity_at": now,
         "next_seq": next_seq, "history_bytes": history_bytes}),
    Thread._meta.pk, Thread._meta.get_field("last_activity_at"), Thread._meta.get_field("next_seq"),
    Thread._meta.get_field("history_bytes"),
)


def store_usage(turn: Turn, usage: Usage) -> None:
    turn.input_tokens = usage.input_tokens
    turn.output_tokens = usage.output_tokens
    turn.cache_write_tokens = usage.cache_write_tokens
    turn.cache_read_tokens = usage.cache_read_tokens


def _measured_thread(turn: Turn) -> ThreadAfterTurn:
    """For a turn finished without its loop (a sweeper): its thread as stored."""
    last = Message.objects.filter(thread_id=turn.thread_id).aggregate(last=Max("seq"))["last"]
    return ThreadAfterTurn(next_seq=0 if last is None else last + 1, history_bytes=None, last_reply_id=None)


def _mark_last_reply(turn: Turn, outcome: Outcome, thread_after: ThreadAfterTurn) -> ThreadAfterTurn:
    """Put the notice on the turn's last reply (created if the turn wrote none)."""
    status = Message.Status.FAILED if outcome.status == Turn.Status.FAILED else Message.Status.COMPLETE
    reply_id = thread_after.last_reply_id
    if reply_id is None:
        reply_id = (Message.objects.filter(turn_id=turn.id, role=Message.Role.ASSISTANT).order_by("-seq")
                    .values_list("id", flat=True).first())
    if reply_id is not None:
        Message.objects.filter(id=reply_id).update(status=status, notice=outcome.notice[:300])
        return thread_after
    if not turn.thread_id:
        return thread_after
    append_message(turn.thread_id, turn.id, role=Message.Role.ASSISTANT, content="", status=status,
                   notice=outcome.notice, seq=thread_after.next_seq)
    return replace(thread_after, next_seq=thread_after.next_seq + 1)


def append_message(
    thread_id: UUID, turn_id: UUID, *, role: str, content: str, status: str, notice: str = "",
    seq: int | None = None,
):
    """A message at the end of the thread (at `seq` when the caller knows it).
    Only the turn's worker writes while the thread is `responding` (upserts and
    deletes are refused), so the next seq can't be taken by anyone else."""
    if seq is None:
        last = Message.objects.filter(thread_id=thread_id).aggregate(last=Max("seq"))["last"]
        seq = 0 if last is None else last + 1
    return Message.objects.create(
        thread_id=thread_id, turn_id=turn_id, seq=seq,
        role=role, content=content, status=status, notice=notice, created_at=timezone.now(),
    )


"""Maintenance jobs (run by Celery beat) and the batched erasure of a person.

The database, not the broker, is the truth about turns: a broker may lose a
task (the folder broker never redelivers one whose worker was killed; Redis
only after its visibility timeout). So these jobs look at the turns:

- `fail_stuck_turns`: a turn still running past its bound plus a grace period
  lost its worker. It fails (`timeout`), keeps its reservation as cost, and its
  thread is free again; what it streamed stays.
- `sweep_queued_turns`: a turn no worker took is published again, once; if it
  is still queued after that, it fails (`queue`) with its reservation released
  (no model call was made).
- `purge_idle_threads`: conversations (with their files; and uploads no message
  took within FILE_UNATTACHED_HOURS) without activity for
  ASSISTANT_IDLE_PURGE_DAYS go, with their messages, tool calls and cards.

Every job is safe when two workers run it at once and when a task is
delivered twice: each turn is finished under its row lock (finish_turn), each
re-enqueue is claimed with a conditional update, purged threads are locked
(and skipped when locked) before they are deleted.

Jobs log ids, kinds, counts and durations, never conversation text.
"""

import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from uuid import UUID

from celery import current_app as app  # config.celery's (Celery's Django fix-up makes it the default), as shared_task
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from assistant.models import Erasure, Turn
from assistant.turn.outcome import NOTICES, Outcome
from assistant.turn.settle import RELEASE, STUCK, finish_turn
from assistant_engine.foundation.broker_folders import ensure_broker_folders
from assistant_engine.organizations.personal_data import ErasureProgress, close_access, erase_user
from conversations.deletion import threads_delete
from conversations.files import purge_unattached_files
from conversations.models import Thread

logger = logging.getLogger("assistant.jobs")

# Rows (turns, erasures) handled per run of a job; the next run takes the rest.
PER_RUN = 500
# A re-enqueue is published once; a turn published this many times is not again.
MAX_ENQUEUES = 2
# The erasure task, published by its name: its module (maintenance_tasks) imports this one, so
# this one does not import it back; the task declares itself under this same name.
ERASE_USER_TASK = "assistant.erase_user"


def _log_job(job: str, started: float, **counts: int) -> None:
    logger.info(
        "job_finished", extra={"job": job, **counts, "duration_ms": round((time.monotonic() - started) * 1000)}
    )


# --- Stuck and never-started turns ------------------------------------------------


def stuck_cutoff(now: datetime) -> datetime:
    """Turns that started before this are past any bound: their worker is gone.

    The grace period covers the task's hard time limit (the worker kills a turn
    60 s past the bound), so the job never races a worker that is still alive.
    """
    return now - timedelta(seconds=settings.ASSISTANT_TURN_SECONDS + settings.ASSISTANT_STUCK_GRACE_SECONDS)


def fail_stuck_turns(now: datetime | None = None) -> int:
    """Fail the running turns whose worker is gone. Returns how many this call failed."""
    started = time.monotonic()
    now = now or timezone.now()
    stuck = list(
        Turn.objects.filter(status=Turn.Status.RUNNING, started_at__lt=stuck_cutoff(now))
        .order_by("started_at")
        .values_list("id", flat=True)[:PER_RUN]
    )
    failed = 0
    for turn_id in stuck:
        # Race: two workers running this job at once, or the turn's own worker
        # finishing at the last moment. finish_turn locks the turn and finishes
        # it only if it is still running: one of them does, once.
        outcome = Outcome(Turn.Status.FAILED, Turn.FailureKind.TIMEOUT, NOTICES[Turn.FailureKind.TIMEOUT])
        if finish_turn(
            turn_id, outcome, usage=None, credits=STUCK, expect_status=Turn.Status.RUNNING, job="fail_stuck_turns"
        ):
            failed += 1
            logger.info("turn_failed_stuck", extra={"turn_id": str(turn_id), "failure_kind": outcome.failure_kind})
    _log_job("fail_stuck_turns", started, found=len(stuck), failed=failed)
    return failed


@dataclass(frozen=True)
class SweepResult:
    requeued: int
    failed: int


def sweep_queued_turns(now: datetime | None = None) -> SweepResult:
    """Publish again, once, the turns that stayed queued too long; fail those
    that stayed queued even after that (reservation released, no cost)."""
    started = time.monotonic()
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.ASSISTANT_QUEUED_SWEEP_SECONDS)
    stale = list(
        Turn.objects.filter(status=Turn.Status.QUEUED, created_at__lt=cutoff)
        .filter(Q(requeued_at__isnull=True) | Q(requeued_at__lt=cutoff))
        .order_by("created_at")
        .values_list("id", "requeued_at", "enqueue_attempts")[:PER_RUN]
    )
    requeued = failed = 0
    for turn_id, requeued_at, attempts in stale:
        if requeued_at is None and attempts < MAX_ENQUEUES:
            requeued += _requeue(turn_id, now)
            continue
        outcome = Outcome(Turn.Status.FAILED, Turn.FailureKind.QUEUE, NOTICES[Turn.FailureKind.QUEUE])
        # Race: a worker claiming the turn right now. Under the turn's lock,
        # finish_turn fails it only if it is still queued; a claim that comes
        # after finds it failed and runs nothing.
        if finish_turn(
            turn_id, outcome, usage=None, credits=RELEASE, expect_status=Turn.Status.QUEUED, job="sweep_queued_turns"
        ):
            failed += 1
            logger.info("turn_failed_queue", extra={"turn_id": str(turn_id), "failure_kind": outcome.failure_kind})
    _log_job("sweep_queued_turns", started, found=len(stale), requeued=requeued, failed=failed)
    return SweepResult(requeued=requeued, failed=failed)


def _requeue(turn_id: UUID, now: datetime) -> bool:
    from assistant.tasks import run_turn_task

    # Race: two sweepers publishing the same turn. The conditional update lets
    # one claim the re-enqueue (a duplicate would be harmless anyway: a turn is
    # claimed by one worker only).
    claimed = Turn.objects.filter(id=turn_id, status=Turn.Status.QUEUED, requeued_at__isnull=True).update(
        requeued_at=now, enqueue_attempts=F("enqueue_attempts") + 1
    )
    if not claimed:
        return False
    try:
        ensure_broker_folders()
        run_turn_task.apply_async(args=[str(turn_id)], retry=True, retry_policy={"max_retries": 2})
    except Exception as error:  # the broker is down: the next sweep fails the turn
        logger.warning("turn_requeue_failed", extra={"turn_id": str(turn_id), "error_type": type(error).__name__})
        return False
    logger.info("turn_requeued", extra={"turn_id": str(turn_id)})
    return True


# --- Idle conversations ------------------------------------------------------------


def purge_idle_threads(now: datetime | None = None, batch_size: int | None = None) -> int:
    """Delete the threads idle for ASSISTANT_IDLE_PURGE_DAYS, with their
    messages, tool calls and cards, one transaction per batch of threads.
    Never a thread that is responding. Returns the number of threads deleted."""
    started = time.monotonic()
    now = now or timezone.now()
    batch_size = batch_size or settings.ASSISTANT_PURGE_BATCH_SIZE
    cutoff = now - timedelta(days=settings.ASSISTANT_IDLE_PURGE_DAYS)
    threads = batches = 0
    rows: dict[str, int] = {}
    while True:
        with transaction.atomic():
            # Race: a message sent to an idle thread while it is purged. The
            # batch's rows are locked, skipping any a chat holds: the chat
            # either finds the thread gone (404) or makes it active first.
            ids = list(
                Thread.objects.select_for_update(skip_locked=True)
                .filter(status=Thread.Status.IDLE, last_activity_at__lt=cutoff)
                .order_by("last_activity_at", "id")
                .values_list("id", flat=True)[:batch_size]
            )
            if not ids:
                break
            _, per_model = threads_delete(ids)  # a few per statement: their cascades read the index
        threads += len(ids)
        batches += 1
        for label, count in per_model.items():
            key = label.rsplit(".", 1)[-1].lower()
            rows[key] = rows.get(key, 0) + count
    # Uploads no message took within a day go with the same hourly job.
    unattached = purge_unattached_files(now)
    _log_job("purge_idle_threads", started, threads=threads, batches=batches,
             messages=rows.get("message", 0), tool_calls=rows.get("toolcall", 0), cards=rows.get("actioncard", 0),
             files=rows.get("attachment", 0), unattached_files=unattached)
    return threads


# --- Erasure of a person -----------------------------------------------------------


def erasure_start(user, *, requested_by=None) -> Erasure:
    """Start erasing a person (or return the erasure already running).

    The door closes at once (account deactivated, API tokens deleted); the
    batches run in the `assistant.erase_user` task, enqueued after commit. If
    the broker can't take it, `continue_erasures` will.
    """
    now = timezone.now()
    try:
        with transaction.atomic():
            erasure = Erasure.objects.create(
                user=user, subject_id=user.pk, requested_by=requested_by, updated_at=now
            )
            close_access(user)
            transaction.on_commit(lambda: enqueue_erasure(erasure.id))
    except IntegrityError:
        # One running erasure per person (a second click, two staff at once).
        return Erasure.objects.get(subject_id=user.pk, status=Erasure.Status.RUNNING)
    logger.info("erasure_started", extra={"erasure_id": str(erasure.id), "subject_id": user.pk})
    return erasure


def enqueue_erasure(erasure_id: UUID, *, countdown: float = 0) -> None:
    """Publish one batch of the erasure. By name: the signature goes through the
    registered task when this process has imported it, else straight to the broker."""
    try:
        ensure_broker_folders()
        app.signature(ERASE_USER_TASK, args=[str(erasure_id)]).apply_async(
            countdown=countdown, retry=True, retry_policy={"max_retries": 2}
        )
    except Exception as error:  # the broker is down: continue_erasures takes it up later
        logger.warning("erasure_enqueue_failed",
                       extra={"erasure_id": str(erasure_id), "error_type": type(error).__name__})


def erasure_run_batch(erasure_id: UUID, *, batch_size: int | None = None) -> ErasureProgress | None:
    """Run one batch of a running erasure. None when it is no longer running."""
    started = time.monotonic()
    batch_size = batch_size or settings.ASSISTANT_ERASURE_BATCH_SIZE
    with transaction.atomic():
        # Race: the self-rescheduled task and continue_erasures running the
        # same erasure at once. The row lock makes the second wait for the
        # first's batch and then see its counts (or that it is done).
        erasure = Erasure.objects.select_for_update().filter(id=erasure_id, status=Erasure.Status.RUNNING).first()
        if erasure is None:
            return None
        if erasure.user_id is None:  # the account was deleted some other way: nothing of it is left
            progress = ErasureProgress(done=True)
        else:
            progress = erase_user(erasure.user, batch_size)
        now = timezone.now()
        erasure.batches += 1
        erasure.counts = {
            name: erasure.counts.get(name, 0) + progress.counts.get(name, 0)
            for name in {*erasure.counts, *progress.counts}
        }
        erasure.blocked_by = progress.blocked_by
        erasure.updated_at = now
        if progress.done:
            erasure.status = Erasure.Status.DONE
            erasure.finished_at = now
            erasure.user = None  # the row is gone (SET_NULL already did it in the database)
        erasure.save(update_fields=["batches", "counts", "blocked_by", "updated_at", "status", "finished_at", "user"])
    logger.info("erasure_batch", extra={
        "erasure_id": str(erasure_id), "done": progress.done, "blocked_by": progress.blocked_by,
        "deleted": sum(progress.counts.values()), "duration_ms": round((time.monotonic() - started) * 1000),
    })
    return progress


def continue_erasures(now: datetime | None = None) -> int:
    """Enqueue the running erasures that made no progress lately (their task
    was lost with a worker, or the broker was down). Returns how many."""
    started = time.monotonic()
    now = now or timezone.now()
    stalled = list(
        Erasure.objects.filter(
            status=Erasure.Status.RUNNING,
            updated_at__lt=now - timedelta(seconds=settings.ASSISTANT_ERASURE_STALL_SECONDS),
        ).values_list("id", flat=True)[:PER_RUN]
    )
    for erasure_id in stalled:
        enqueue_erasure(erasure_id)
    _log_job("continue_erasures", started, enqueued=len(stalled))
    return len(stalled)

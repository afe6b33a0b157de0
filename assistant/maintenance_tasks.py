"""Celery tasks of the maintenance jobs: thin, ids only (see maintenance.py).

Not named tasks.py, so autodiscovery does not find it: config/celery.py lists
it in `imports`, next to the beat schedule.

The periodic tasks are not re-queued when their worker dies
(reject_on_worker_lost=False): the next beat tick runs them again anyway, and a
task that kills its worker must not be redelivered forever.
"""

from uuid import UUID

from celery import shared_task
from django.conf import settings

from assistant import maintenance
from assistant_engine.organizations.access_log import staff_accesses_purge

JOB = {"acks_late": True, "reject_on_worker_lost": False, "ignore_result": True}


@shared_task(name="assistant.fail_stuck_turns", soft_time_limit=120, time_limit=150, **JOB)
def fail_stuck_turns_task() -> int:
    return maintenance.fail_stuck_turns()


@shared_task(name="assistant.sweep_queued_turns", soft_time_limit=120, time_limit=150, **JOB)
def sweep_queued_turns_task() -> int:
    result = maintenance.sweep_queued_turns()
    return result.requeued + result.failed


@shared_task(name="assistant.purge_idle_threads", soft_time_limit=1800, time_limit=1860, **JOB)
def purge_idle_threads_task() -> int:
    return maintenance.purge_idle_threads()


@shared_task(name="assistant.continue_erasures", soft_time_limit=60, time_limit=90, **JOB)
def continue_erasures_task() -> int:
    return maintenance.continue_erasures()


@shared_task(name="assistant.purge_staff_accesses", soft_time_limit=1800, time_limit=1860, **JOB)
def purge_staff_accesses_task() -> int:
    return staff_accesses_purge()


@shared_task(name=maintenance.ERASE_USER_TASK, soft_time_limit=300, time_limit=330, **JOB)
def erase_user_task(erasure_id: str) -> bool:
    """One batch, then the next one is scheduled until the erasure is done
    (later when a reply is being written into one of the person's threads)."""
    progress = maintenance.erasure_run_batch(UUID(erasure_id))
    if progress is None or progress.done:
        return True
    countdown = settings.ASSISTANT_ERASURE_RETRY_SECONDS if progress.blocked_by else 0
    maintenance.enqueue_erasure(UUID(erasure_id), countdown=countdown)
    return False

"""Whether the assistant service is answering, from the workers' own heartbeats.

Each Celery worker process writes its row (WorkerBeat) every
WORKER_BEAT_SECONDS while it runs and deletes it when it stops cleanly; a row
not renewed for WORKER_BEAT_MISSED beats is a worker that is gone (killed,
frozen, its machine down). A turn still queued after SERVICE_DOWN_SECONDS
while no worker beats is one the service is not answering: the turn's status
says so (`serviceDown`), and the chat page shows SERVICE_DOWN_NOTICE. A turn
that waits while workers beat is only waiting its turn (they are busy).
"""

import logging
import threading
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone
from django.utils.translation import gettext_noop

from assistant.models import Turn, WorkerBeat

logger = logging.getLogger("assistant.service")

SERVICE_DOWN_NOTICE = gettext_noop(
    "The assistant service isn't answering right now; your message is kept and runs when it is back.")
WORKER_BEAT_MISSED = 3  # beats a worker may miss (a slow database, a busy machine) before it counts as gone
FORGOTTEN_AFTER = timedelta(days=1)  # rows of workers that never said goodbye are deleted after this


def workers_beating() -> bool:
    since = timezone.now() - timedelta(seconds=settings.WORKER_BEAT_SECONDS * WORKER_BEAT_MISSED)
    return WorkerBeat.objects.filter(beat_at__gte=since).exists()


def service_down(turn: Turn) -> bool:
    """The turn waited SERVICE_DOWN_SECONDS in the queue and no worker beats.
    Reads the heartbeats only for such a turn (a query, rarely)."""
    if turn.status != Turn.Status.QUEUED:
        return False
    waited = timezone.now() - turn.created_at
    return waited >= timedelta(seconds=settings.SERVICE_DOWN_SECONDS) and not workers_beating()


# --- The worker's side ---------------------------------------------------------------


def beat(name: str, started_at) -> None:
    WorkerBeat.objects.update_or_create(name=name, defaults={"beat_at": timezone.now(), "started_at": started_at})


class Heartbeat:
    """A daemon thread of the worker's main process that beats until stopped.
    It holds no database connection between beats."""

    def __init__(self, name: str):
        self.name = name
        self.started_at = timezone.now()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="worker-heartbeat", daemon=True)

    def start(self) -> None:
        self._safely(lambda: WorkerBeat.objects.filter(beat_at__lt=timezone.now() - FORGOTTEN_AFTER).delete())
        self.thread.start()

    def stop(self) -> None:
        """The worker stops cleanly: it is gone at once, not after missed beats."""
        self.stopped.set()
        self.thread.join(timeout=settings.WORKER_BEAT_SECONDS)
        self._safely(lambda: WorkerBeat.objects.filter(name=self.name).delete())

    def _run(self) -> None:
        while True:
            self._safely(lambda: beat(self.name, self.started_at))
            if self.stopped.wait(settings.WORKER_BEAT_SECONDS):
                return

    def _safely(self, write) -> None:
        try:
            write()
        except DatabaseError as error:  # the next beat tries again; a worker never stops for its heartbeat
            logger.warning("worker_beat_failed", extra={"worker": self.name, "error": type(error).__name__})
        finally:
            connection.close()  # this thread's own connection

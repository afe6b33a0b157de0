"""What every worker of the engine does at start and stop, whichever Celery app
(the demo's, a product's) runs it: connected when the apps load (apps.py), which
Celery's Django fix-up does while the worker imports its task modules, before
it sends worker_init.

- A production worker or beat refuses to start on an error of the start-up
  checks (foundation.startup), e.g. no model named: it would run turns on the
  demo model. SystemExit, because Celery logs and ignores an Exception raised
  by a signal handler.
- The worker's heartbeat (assistant.service): the API tells a person whose turn
  waits that the service is not answering when no worker beats.
"""

import os

from celery import signals

_heartbeat = None


def _refuse_to_start_on_errors(**kwargs) -> None:
    from django.core.exceptions import ImproperlyConfigured

    from assistant_engine.foundation.startup import refuse_to_start_on_errors

    try:
        refuse_to_start_on_errors()
    except ImproperlyConfigured as error:
        raise SystemExit(f"Refusing to start: {error}") from None


def _start_heartbeat(sender=None, **kwargs) -> None:
    from assistant.service import Heartbeat

    global _heartbeat
    _heartbeat = Heartbeat(f"{sender.hostname}:{os.getpid()}")
    _heartbeat.start()


def _stop_heartbeat(**kwargs) -> None:
    if _heartbeat is not None:
        _heartbeat.stop()


def connect() -> None:
    """Idempotent (dispatch_uid): the apps may load more than once in a test run."""
    signals.worker_init.connect(_refuse_to_start_on_errors, dispatch_uid="assistant.refuse_worker", weak=False)
    signals.beat_init.connect(_refuse_to_start_on_errors, dispatch_uid="assistant.refuse_beat", weak=False)
    signals.worker_ready.connect(_start_heartbeat, dispatch_uid="assistant.heartbeat_start", weak=False)
    signals.worker_shutdown.connect(_stop_heartbeat, dispatch_uid="assistant.heartbeat_stop", weak=False)

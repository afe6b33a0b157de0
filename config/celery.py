import os

from celery import Celery, signals
from kombu.transport import TRANSPORT_ALIASES

# `filesystem://` is our folder broker, which writes each message whole (config/broker.py).
TRANSPORT_ALIASES["filesystem"] = "config.broker:Transport"

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Task modules that autodiscovery (which imports only `tasks.py`) does not find.
app.conf.imports = ("assistant.maintenance_tasks", "assistant.card_tasks")

# The maintenance jobs, run by `celery -A config worker --beat` (`make run`) or
# a separate `celery -A config beat`. Every job is idempotent and safe when two
# workers run it at once. A tick that waited in the queue past the next one is
# dropped (`expires`): the next tick does the same work.
MINUTE = 60.0
app.conf.beat_schedule = {
    "fail-stuck-turns": {"task": "assistant.fail_stuck_turns", "schedule": MINUTE, "options": {"expires": MINUTE}},
    "sweep-queued-turns": {
        "task": "assistant.sweep_queued_turns", "schedule": MINUTE, "options": {"expires": MINUTE},
    },
    "expire-cards": {"task": "assistant.expire_cards", "schedule": 5 * MINUTE, "options": {"expires": 5 * MINUTE}},
    "sweep-interrupted-cards": {
        "task": "assistant.sweep_interrupted_cards", "schedule": 5 * MINUTE, "options": {"expires": 5 * MINUTE},
    },
    "continue-erasures": {
        "task": "assistant.continue_erasures", "schedule": 5 * MINUTE, "options": {"expires": 5 * MINUTE},
    },
    "purge-telegram-updates": {
        "task": "telegram.purge_received_updates", "schedule": 60 * MINUTE, "options": {"expires": 60 * MINUTE},
    },
    "purge-idle-threads": {
        "task": "assistant.purge_idle_threads", "schedule": 60 * MINUTE, "options": {"expires": 60 * MINUTE},
    },
    "purge-staff-accesses": {
        "task": "assistant.purge_staff_accesses", "schedule": 24 * 60 * MINUTE,
        "options": {"expires": 24 * 60 * MINUTE},
    },
    "purge-expired-tokens": {
        "task": "assistant.purge_expired_tokens", "schedule": 60 * MINUTE, "options": {"expires": 60 * MINUTE},
    },
}


@signals.worker_init.connect
@signals.beat_init.connect
def _create_broker_folders(**kwargs) -> None:
    from assistant_engine.foundation.broker_folders import ensure_broker_folders

    ensure_broker_folders()


@signals.worker_init.connect
@signals.beat_init.connect
def _refuse_to_start_on_errors(**kwargs) -> None:
    """A production worker or beat refuses to start on an error of the start-up
    checks (foundation.startup), e.g. no model named: it would run turns on the
    demo model. SystemExit, because Celery logs and ignores an Exception raised
    by a signal handler. Celery's Django fix-up has loaded the apps by then (worker
    and beat), so the apps' checks are registered."""
    from django.core.exceptions import ImproperlyConfigured

    from assistant_engine.foundation.startup import refuse_to_start_on_errors

    try:
        refuse_to_start_on_errors()
    except ImproperlyConfigured as error:
        raise SystemExit(f"Refusing to start: {error}") from None


# The worker's heartbeat (assistant.service): the API tells a person whose turn
# waits that the service is not answering when no worker beats.
_heartbeat = None


@signals.worker_ready.connect
def _start_heartbeat(sender=None, **kwargs) -> None:
    from assistant.service import Heartbeat

    global _heartbeat
    _heartbeat = Heartbeat(f"{sender.hostname}:{os.getpid()}")
    _heartbeat.start()


@signals.worker_shutdown.connect
def _stop_heartbeat(**kwargs) -> None:
    if _heartbeat is not None:
        _heartbeat.stop()

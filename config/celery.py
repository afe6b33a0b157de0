import os

from celery import Celery, signals
from kombu.transport import TRANSPORT_ALIASES

from assistant_engine.foundation.beat import BEAT_SCHEDULE

# `filesystem://` is our folder broker, which writes each message whole (config/broker.py).
TRANSPORT_ALIASES["filesystem"] = "config.broker:Transport"

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The engine's maintenance jobs (assistant_engine/foundation/beat.py), run by
# `celery -A config worker --beat` (`make run`) or a separate `celery -A config beat`.
app.conf.beat_schedule = BEAT_SCHEDULE


@signals.worker_init.connect
@signals.beat_init.connect
def _create_broker_folders(**kwargs) -> None:
    from assistant_engine.foundation.broker_folders import ensure_broker_folders

    ensure_broker_folders()


# The engine's own worker signals (start-up checks, heartbeat) are connected by
# its apps (assistant/worker_signals.py), as under any product's Celery app.

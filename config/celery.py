import os

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def ensure_broker_folders() -> None:
    """The filesystem broker needs its folders to exist, in every process."""
    from django.conf import settings

    options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
    for key in ("data_folder_in", "processed_folder"):
        if key in options:
            os.makedirs(options[key], exist_ok=True)


@signals.worker_init.connect
@signals.beat_init.connect
def _create_broker_folders(**kwargs) -> None:
    ensure_broker_folders()

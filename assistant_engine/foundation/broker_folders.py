"""The folder broker (`filesystem://`, config/broker.py) needs its folders to
exist in every process that publishes or consumes: a web process publishing a
task, a worker, beat. Here, below every app, so an app that publishes never
imports config.celery."""

import os

from django.conf import settings


def ensure_broker_folders() -> None:
    """The filesystem broker needs its folders to exist, in every process."""
    # A product on Redis (or any other broker) may not set transport options at all.
    options = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", None) or {}
    for key in ("data_folder_in", "processed_folder", "control_folder"):
        if key in options:
            os.makedirs(options[key], exist_ok=True)

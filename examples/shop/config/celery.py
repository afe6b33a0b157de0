import os

from celery import Celery

from assistant.kit import BEAT_SCHEDULE

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("shop")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()  # the shop's tasks and the engine's (it runs the assistant's turns)
app.conf.beat_schedule = {**BEAT_SCHEDULE}

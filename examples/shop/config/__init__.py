# The shop's Celery app, loaded with Django so tasks are sent through it.
from config.celery import app as celery_app

__all__ = ["celery_app"]

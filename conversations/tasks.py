"""Celery tasks of conversations: thin wrappers that take ids and call the services."""

from uuid import UUID

from celery import shared_task
from django.conf import settings

from conversations import files


# Reading runs in a bounded child process (conversations/pdf_reading.py); the
# task's own limits are a backstop in a prefork pool.
@shared_task(name="conversations.read_file", acks_late=True, reject_on_worker_lost=True, ignore_result=True,
             soft_time_limit=settings.FILE_PDF_WALL_SECONDS + 30, time_limit=settings.FILE_PDF_WALL_SECONDS + 60)
def read_file_task(file_id: str) -> None:
    files.file_read(UUID(file_id))

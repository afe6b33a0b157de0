"""Deleting old rows in batches, for the periodic jobs: each batch its own
short transaction (no long lock on a big table), counts and duration logged,
never the rows."""

import logging
import time

from django.db import transaction
from django.db.models import QuerySet


def purge_in_batches(rows: QuerySet, *, batch_size: int, job: str, logger: logging.Logger) -> int:
    """Delete `rows` (a filtered queryset), `batch_size` primary keys at a time.

    Two runs at once are harmless: each deletes by key what it found, and a
    row the other deleted first is simply not counted twice.
    """
    started = time.monotonic()
    deleted = batches = 0
    while True:
        with transaction.atomic():
            keys = list(rows.order_by("pk").values_list("pk", flat=True)[:batch_size])
            if not keys:
                break
            deleted += rows.model.objects.filter(pk__in=keys).delete()[0]
        batches += 1
    logger.info("job_finished", extra={
        "job": job, "deleted": deleted, "batches": batches,
        "duration_ms": round((time.monotonic() - started) * 1000),
    })
    return deleted

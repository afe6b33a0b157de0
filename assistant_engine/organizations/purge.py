"""Deleting old rows in batches, for the periodic jobs: each batch its own
short transaction (no long lock on a big table), counts and duration logged,
never the rows."""

import logging
import time

from django.db import transaction
from django.db.models import QuerySet


def purge_in_batches(rows: QuerySet, *, batch_size: int, job: str, logger: logging.Logger) -> int:
    """Delete `rows` (a filtered queryset), `batch_size` primary keys at a time.

    Give `rows` the ordering of the index its filter reads (the expiry, the
    date): the batch then walks that index from its start and stops after
    `batch_size` rows. Ordered by primary key instead, the planner may walk
    the whole key checking each row's date, which costs the table, not the
    batch.

    Two runs at once are harmless: each deletes by key what it found, and a
    row the other deleted first is simply not counted twice.
    """
    started = time.monotonic()
    deleted = batches = 0
    while True:
        with transaction.atomic():
            keys = list(_in_index_order(rows).values_list("pk", flat=True)[:batch_size])
            if not keys:
                break
            deleted += rows.model.objects.filter(pk__in=keys).delete()[0]
        batches += 1
    logger.info("job_finished", extra={
        "job": job, "deleted": deleted, "batches": batches,
        "duration_ms": round((time.monotonic() - started) * 1000),
    })
    return deleted


def _in_index_order(rows: QuerySet) -> QuerySet:
    return rows if rows.query.order_by else rows.order_by("pk")

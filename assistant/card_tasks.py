"""The periodic jobs of confirmation cards (scheduled by Celery beat): expiry,
and the sweep of actions cut short.

Not named tasks.py, so autodiscovery does not find it: the worker must import
it (CELERY_IMPORTS or an explicit autodiscovery) where the schedule is set.
"""

from celery import shared_task

from assistant.cards import cards_expire, cards_mark_interrupted


@shared_task(
    name="assistant.expire_cards",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=60,
    time_limit=90,
    ignore_result=True,
)
def expire_cards_task() -> int:
    # Harmless when run twice or redelivered: each card is expired once.
    return cards_expire()


@shared_task(
    name="assistant.sweep_interrupted_cards",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=60,
    time_limit=90,
    ignore_result=True,
)
def sweep_interrupted_cards_task() -> int:
    # Harmless when run twice: a card leaves `confirmed` for `outcome_unknown` once.
    return cards_mark_interrupted()

"""Celery tasks: thin wrappers that take ids and call the services."""

from uuid import UUID

from celery import shared_task
from django.conf import settings

from assistant import loop

_TURN_LIMIT = settings.ASSISTANT_TURN_SECONDS


# The time limits act only in a prefork pool (`WORKER_POOL=prefork`): Celery's
# threads pool, the default (scripts/serve.sh), has none. The turn's own bound
# (ASSISTANT_TURN_SECONDS) is the loop's, checked while it waits on the model.
@shared_task(
    name="assistant.run_turn",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=_TURN_LIMIT + 30,
    time_limit=_TURN_LIMIT + 60,
    ignore_result=True,
)
def run_turn_task(turn_id: str) -> None:
    loop.run_turn(UUID(turn_id))

"""Celery tasks of the organizations app: thin (see tokens.py). Found by
autodiscovery; the beat schedule is in config/celery.py.

Not re-queued when their worker dies (reject_on_worker_lost=False): the next
beat tick runs them again anyway.
"""

from celery import shared_task

from assistant_engine.organizations.tokens import expired_tokens_purge


@shared_task(name="assistant.purge_expired_tokens", soft_time_limit=600, time_limit=660, acks_late=True,
             reject_on_worker_lost=False, ignore_result=True)
def purge_expired_tokens_task() -> int:
    return expired_tokens_purge()

"""Celery tasks of the Telegram surface: thin, they take ids and plain data.

Bot API failures that pass are retried by Celery with backoff: a 429 after
Telegram's `retry_after`, a network error after 2, 4, 8… seconds. A refused
call (400 Bad Request, 403 Forbidden: the person blocked the bot) is logged by
kind and dropped: sending it again would be refused again.
"""

import logging
from datetime import timedelta
from uuid import UUID

from celery import shared_task
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter

from assistant_engine.surfaces.telegram import bot, follow, handlers
from assistant_engine.surfaces.telegram.models import StreamedReply

logger = logging.getLogger("assistant_engine.surfaces.telegram")

MAX_RETRIES = 8
# A follow task holds a worker this long at most, then enqueues itself again.
FOLLOW_SLICE_SECONDS = 20.0
_CALLS = {"send_html": bot.send_html, "edit_html": bot.edit_html, "answer_callback": bot.answer_callback,
          "typing": bot.typing}


def retry_delay(error: Exception, retries: int) -> float:
    if isinstance(error, RetryAfter):
        after = error.retry_after
        return after.total_seconds() if isinstance(after, timedelta) else float(after)
    return float(min(60, 2 ** (retries + 1)))


@shared_task(name="telegram.handle_update", acks_late=True, reject_on_worker_lost=True, ignore_result=True,
             soft_time_limit=60, time_limit=90)
def handle_update_task(update: dict) -> None:
    if not handlers.claim_update(update["update_id"]):
        logger.info("telegram_update_duplicate", extra={"update_id": update["update_id"]})
        return
    try:
        outcome = handlers.handle_update(update)
    except Exception as error:  # by kind only: a message could carry the person's text
        logger.error("telegram_update_failed", extra={"update_id": update["update_id"],
                                                      "error_type": type(error).__name__})
        return
    for name, kwargs in outcome.calls:
        bot_call_task.delay(name, kwargs)
    if outcome.follow_turn is not None:
        follow_turn_task.delay(str(outcome.follow_turn), outcome.language)


@shared_task(bind=True, name="telegram.bot_call", acks_late=True, ignore_result=True, max_retries=MAX_RETRIES,
             soft_time_limit=60, time_limit=90)
def bot_call_task(self, name: str, kwargs: dict) -> None:
    call = _CALLS[name]
    try:
        bot.run(lambda b: call(b, **kwargs))
    except (BadRequest, Forbidden) as error:
        logger.warning("telegram_call_refused", extra={"method": name, "error_type": type(error).__name__})
    except (RetryAfter, NetworkError) as error:
        logger.info("telegram_call_retry", extra={"method": name, "error_type": type(error).__name__,
                                                  "retries": self.request.retries})
        raise self.retry(countdown=retry_delay(error, self.request.retries), exc=error) from None


@shared_task(bind=True, name="telegram.follow_turn", acks_late=True, ignore_result=True, max_retries=MAX_RETRIES,
             soft_time_limit=FOLLOW_SLICE_SECONDS + 60, time_limit=FOLLOW_SLICE_SECONDS + 90)
def follow_turn_task(self, turn_id: str, language: str = "") -> None:
    """`language`: the update's (a task queued before it was passed follows in the default)."""
    try:
        more = follow.follow_turn(UUID(turn_id), slice_seconds=FOLLOW_SLICE_SECONDS, language=language)
    except (BadRequest, Forbidden) as error:
        # The chat refuses this reply (the bot was blocked, the message is gone):
        # stop following it; the reply stays in the conversation.
        logger.warning("telegram_follow_refused", extra={"turn_id": turn_id, "error_type": type(error).__name__})
        StreamedReply.objects.filter(turn_id=UUID(turn_id)).delete()
        return
    except (RetryAfter, NetworkError) as error:
        logger.info("telegram_follow_retry", extra={"turn_id": turn_id, "error_type": type(error).__name__,
                                                    "retries": self.request.retries})
        raise self.retry(countdown=retry_delay(error, self.request.retries), exc=error) from None
    if more:
        follow_turn_task.delay(turn_id, language)


@shared_task(name="telegram.purge_received_updates", ignore_result=True)
def purge_received_updates_task() -> int:
    """Telegram stops retrying an update after a day: older ids need not be kept."""
    return handlers.telegram_purge(older_than=timedelta(days=2))

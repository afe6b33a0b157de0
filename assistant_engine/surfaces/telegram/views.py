"""The webhook Telegram posts updates to. (The browser page that links an account is
a page of the browser UI: web/telegram_link.py.)"""

import hmac
import json
import logging

from django.conf import settings
from django.http import Http404, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from assistant_engine.surfaces.telegram.handlers import record_received
from assistant_engine.surfaces.telegram.models import ReceivedUpdate

logger = logging.getLogger("assistant_engine.surfaces.telegram")

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"  # noqa: S105 (a header name)


def _error(status: int, code: str, detail: str) -> JsonResponse:
    return JsonResponse({"code": code, "detail": detail}, status=status)


@csrf_exempt  # Telegram's secret header authenticates the request, not a cookie
@require_POST
def webhook(request):
    """Checks the secret, records the update_id (a retried delivery is
    acknowledged and dropped) and hands the update to Celery at once."""
    if not settings.TELEGRAM_BOT_TOKEN:
        raise Http404("The Telegram surface is off.")
    sent = request.headers.get(SECRET_HEADER, "")
    if not hmac.compare_digest(sent.encode(), settings.TELEGRAM_WEBHOOK_SECRET.encode()):
        logger.warning("telegram_webhook_forbidden", extra={"has_header": bool(sent)})
        return _error(403, "forbidden", "Wrong or missing secret token.")
    update = _parse(request.body)
    if update is None:
        return _error(400, "invalid_update", "The body is not a Telegram update.")
    if not record_received(update["update_id"]):
        return JsonResponse({"ok": True, "duplicate": True})
    try:
        _enqueue(update)
    except Exception as error:  # any broker failure: Telegram delivers the update again later
        logger.warning("telegram_enqueue_failed", extra={"update_id": update["update_id"],
                                                         "error_type": type(error).__name__})
        ReceivedUpdate.objects.filter(update_id=update["update_id"], handled_at__isnull=True).delete()
        return _error(503, "queue_unavailable", "The update could not be queued; deliver it again.")
    return JsonResponse({"ok": True})


# Telegram's updates nest a dozen levels at most; the task queue re-encodes
# the update, so a deeper one is refused here rather than failing there.
MAX_DEPTH = 32
# update_id is stored in a signed 64-bit column (ReceivedUpdate).
UPDATE_ID_LIMIT = 2**63


def _parse(body: bytes) -> dict | None:
    try:
        update = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(update, dict) or type(update.get("update_id")) is not int:
        return None
    if not 0 <= update["update_id"] < UPDATE_ID_LIMIT or not _within_depth(update, MAX_DEPTH):
        return None
    return update


def _within_depth(value, limit: int) -> bool:
    """Whether no list or object nests deeper than `limit` (walked without recursion)."""
    level = [value]
    for _ in range(limit):
        level = [child for item in level if isinstance(item, dict | list)
                 for child in (item.values() if isinstance(item, dict) else item)]
        if not level:
            return True
    return not any(isinstance(item, dict | list) for item in level)


def _enqueue(update: dict) -> None:
    from assistant_engine.foundation.broker_folders import ensure_broker_folders
    from assistant_engine.surfaces.telegram.tasks import handle_update_task

    ensure_broker_folders()
    # Fail fast: Telegram waits for the answer and retries on an error.
    handle_update_task.apply_async(
        args=[update], retry=True,
        retry_policy={"max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 0.5},
    )

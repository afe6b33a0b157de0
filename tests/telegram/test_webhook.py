"""POST /telegram/webhook: Telegram's secret header, each update_id once,
handed to Celery at once (the broker folder of this test process; no worker)."""

import json
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.test import Client

from assistant_engine.surfaces.telegram.models import ReceivedUpdate
from tests.maintenance.conftest import free_port, publishing_to
from tests.telegram.conftest import OLIVIA_TG, SECRET, message_update, post_update

pytestmark = pytest.mark.django_db


def queued_tasks() -> list[str]:
    folder = Path(django_settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"])
    if not folder.is_dir():
        return []
    return [json.loads(path.read_text())["headers"]["task"] for path in folder.iterdir()]


@pytest.fixture(autouse=True)
def empty_queue():
    folder = Path(django_settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"])
    for path in folder.glob("*") if folder.is_dir() else []:
        path.unlink()


@pytest.mark.parametrize("secret", [None, "", "wrong-secret", SECRET + "x", SECRET[:-1]])
def test_a_wrong_or_missing_secret_is_403_and_nothing_is_done(telegram_on, secret):
    response = post_update(message_update(OLIVIA_TG, "hello"), secret=secret)
    assert response.status_code == 403 and response.json()["code"] == "forbidden"
    assert not ReceivedUpdate.objects.exists() and queued_tasks() == []


def test_an_update_is_recorded_and_handed_to_celery_once(telegram_on):
    update = message_update(OLIVIA_TG, "hello")
    assert post_update(update).json() == {"ok": True}
    assert post_update(update).json() == {"ok": True, "duplicate": True}
    assert list(ReceivedUpdate.objects.values_list("update_id", flat=True)) == [update["update_id"]]
    assert queued_tasks() == ["telegram.handle_update"]


@pytest.mark.parametrize("body", [
    b"not json", b"[]", b'{"update_id": "7"}', b'{"update_id": -1}', b"{}", b'{"update_id": true}',
    # Once a 500: an update_id past the 64-bit column (OverflowError), and JSON
    # nested past the parser's recursion limit (RecursionError).
    b'{"update_id": 1000000000000000000000000000000}', b'{"update_id": 9223372036854775808}',
    b'{"update_id": 1, "message": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    b'{"update_id": 2, "message": ' + b'{"a":' * 40 + b"1" + b"}" * 40 + b"}",
], ids=lambda body: body[:40].decode())
def test_a_body_that_is_not_an_update_is_400(telegram_on, body):
    response = Client().post("/telegram/webhook", data=body, content_type="application/json",
                             HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN=SECRET)
    assert response.status_code == 400 and response.json()["code"] == "invalid_update"
    assert not ReceivedUpdate.objects.exists() and queued_tasks() == []


def test_the_largest_update_id_is_taken(telegram_on):
    update = {**message_update(OLIVIA_TG, "hello"), "update_id": 2**63 - 1}
    assert post_update(update).json() == {"ok": True}
    assert ReceivedUpdate.objects.get().update_id == 2**63 - 1


def test_the_surface_is_off_without_a_token(settings):
    settings.TELEGRAM_BOT_TOKEN = ""
    assert post_update(message_update(OLIVIA_TG, "hello")).status_code == 404
    assert not ReceivedUpdate.objects.exists()


def test_only_post_is_allowed(telegram_on):
    assert Client().get("/telegram/webhook").status_code == 405


def test_a_broker_that_is_down_answers_503_so_telegram_delivers_again(telegram_on):
    update = message_update(OLIVIA_TG, "hello")
    with publishing_to(f"redis://127.0.0.1:{free_port()}/0"):  # nothing listens there
        response = post_update(update)
    assert response.status_code == 503 and response.json()["code"] == "queue_unavailable"
    assert not ReceivedUpdate.objects.exists()  # the next delivery is not taken for a duplicate
    assert post_update(update).json() == {"ok": True}


def test_old_update_ids_are_purged(telegram_on):
    from datetime import timedelta

    from django.utils import timezone

    from assistant_engine.surfaces.telegram.tasks import purge_received_updates_task

    ReceivedUpdate.objects.create(update_id=1, received_at=timezone.now() - timedelta(days=3))
    ReceivedUpdate.objects.create(update_id=2, received_at=timezone.now() - timedelta(hours=1))
    assert purge_received_updates_task() == 1
    assert list(ReceivedUpdate.objects.values_list("update_id", flat=True)) == [2]

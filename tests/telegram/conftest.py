"""The Telegram surface's fixtures: a fake Bot API on 127.0.0.1 (tests/fakes/
telegram_api.py), the surface switched on against it, and updates shaped as
Telegram posts them to the webhook."""

import itertools
import json
import time

import pytest
from django.test import Client

from tests.fakes.telegram_api import TOKEN, FakeBotApi

SECRET = "webhook-secret-for-tests"  # noqa: S105
OLIVIA_TG = 7001  # the owner's Telegram user id (and private chat id)
COLIN_TG = 7002
STRANGER_TG = 7999

_update_ids = itertools.count(500_000)
_message_ids = itertools.count(1)


@pytest.fixture
def bot_api():
    with FakeBotApi() as api:
        yield api


@pytest.fixture
def telegram_on(settings, bot_api):
    settings.TELEGRAM_BOT_TOKEN = TOKEN
    settings.TELEGRAM_WEBHOOK_SECRET = SECRET
    settings.TELEGRAM_API_BASE_URL = bot_api.base_url
    settings.TELEGRAM_BOT_USERNAME = "assistant_bot"
    return bot_api


def worker_env(bot_api, **extra) -> dict[str, str]:
    # These settings take the offline model's pause from the environment.
    return {"DJANGO_SETTINGS_MODULE": "tests.maintenance.worker_settings", "TELEGRAM_BOT_TOKEN": TOKEN,
            "TELEGRAM_WEBHOOK_SECRET": SECRET, "TELEGRAM_API_BASE_URL": bot_api.base_url, **extra}


def user_json(telegram_id: int, language_code: str | None = "en") -> dict:
    user = {"id": telegram_id, "is_bot": False, "first_name": f"User{telegram_id}"}
    return user if language_code is None else {**user, "language_code": language_code}  # Telegram may leave it out


def message_update(telegram_id: int, text: str, *, update_id: int | None = None, group_id: int | None = None,
                   language_code: str | None = "en", forward_origin: dict | None = None) -> dict:
    chat = ({"id": group_id, "type": "group", "title": "Team"} if group_id
            else {"id": telegram_id, "type": "private", "first_name": f"User{telegram_id}"})
    message = {
        "message_id": next(_message_ids), "from": user_json(telegram_id, language_code), "chat": chat,
        "date": int(time.time()), "text": text,
    }
    if forward_origin is not None:  # a message the person forwarded (Bot API's MessageOrigin)
        message["forward_origin"] = {"date": int(time.time()) - 60, **forward_origin}
    if text.startswith("/"):
        message["entities"] = [{"offset": 0, "length": len(text.split(" ")[0]), "type": "bot_command"}]
    return {"update_id": update_id if update_id is not None else next(_update_ids), "message": message}


def click_update(telegram_id: int, data: str, *, message_id: int, chat_id: int | None = None,
                 language_code: str | None = "en") -> dict:
    chat = chat_id or telegram_id
    return {"update_id": next(_update_ids), "callback_query": {
        "id": f"cbq-{next(_message_ids)}", "from": user_json(telegram_id, language_code), "chat_instance": "-4242",
        "data": data, "message": {
            "message_id": message_id, "date": int(time.time()), "text": "card",
            "chat": {"id": chat, "type": "private"}, "from": {"id": 123456, "is_bot": True, "first_name": "A"},
        },
    }}


def post_update(update: dict, *, secret: str | None = SECRET, client: Client | None = None):
    headers = {} if secret is None else {"HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN": secret}
    return (client or Client()).post("/telegram/webhook", data=json.dumps(update),
                                      content_type="application/json", **headers)

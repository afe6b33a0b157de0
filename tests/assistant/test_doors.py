"""The door a turn came through, told to its reservation (assistant/doors.py):
a token is the API, the browser's session the chat page unless its panel says
so; a conversation another door holds (Telegram, MCP, /ai/) is that door's."""

import json

import pytest

from assistant.chat import chat_submit
from assistant.doors import turn_door
from conversations.models import Thread
from credits.models import Door, LedgerEntry
from tests.web.conftest import web_client


def door_of(turn_id) -> tuple[str, str]:
    entry = LedgerEntry.objects.get(turn_id=turn_id, kind="reserve")
    return entry.door, entry.model


def posted(client, **headers) -> str:
    response = client.post("/api/chat", json.dumps({"message": "Hi"}), content_type="application/json", **headers)
    assert response.status_code == 202, response.content
    return door_of(response.json()["turnId"])[0]


def test_a_token_is_the_api_a_session_the_browser_and_its_panel_says_so(owner):
    browser = web_client(owner)
    assert posted(owner.client) == Door.API
    assert posted(browser) == Door.BROWSER
    assert posted(browser, HTTP_X_ASSISTANT_DOOR="panel") == Door.PANEL
    assert posted(browser, HTTP_X_ASSISTANT_DOOR="api") == Door.BROWSER  # only the panel is told


def test_the_reservation_names_the_turns_model(owner):
    submitted = chat_submit(owner.member, message="Hi", conversation_id=None, door=Door.BROWSER)
    assert door_of(submitted.turn_id) == (Door.BROWSER, "offline")


@pytest.mark.parametrize(("fields", "door"), [
    ({"surface": "telegram"}, Door.TELEGRAM),
    ({"surface": "mcp"}, Door.MCP),
    ({"external_id": "client-7"}, Door.AI_MEMORY),
    ({"client_json": "{}"}, Door.AI_MEMORY),
    ({"external_id": "api:7d2c4d9e-3f7b-4a4c-9a55-0d9e3c1f1a11"}, Door.API),  # an /api/ upload: as asked
    ({}, Door.API),
])
def test_a_conversation_another_door_holds_is_that_doors(fields, door):
    assert turn_door(Thread(**fields), Door.API) == door

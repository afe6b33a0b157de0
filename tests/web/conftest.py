"""Fixtures of the browser UI's tests.

Plain page tests use Django's test client, logged in as the fixed cast of
tests/conftest.py. Browser tests (marked `browser`) drive Debian's Chromium with
Playwright against pytest-django's live server, with a real Celery worker
process running the turns: see browser.py.
"""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from assistant.models import ActionCard, Turn
from conversations.models import Message, Thread, ToolCall


def web_client(person) -> Client:
    client = Client()
    client.force_login(person.user)
    return client


@pytest.fixture
def owner_web(owner) -> Client:
    return web_client(owner)


@pytest.fixture
def colleague_web(colleague) -> Client:
    return web_client(colleague)


@pytest.fixture
def outsider_web(outsider) -> Client:
    return web_client(outsider)


def make_conversation(person, *, title="Trip to Zurich", content="Plan my **trip**", reply="Here is the plan.",
                      status=Thread.Status.IDLE, moment=None):
    """A thread with one user message and one assistant reply that called a tool."""
    moment = moment or timezone.now()
    thread = Thread.objects.create(
        organization=person.organization, user=person.user, title=title, created_at=moment, updated_at=moment,
        last_activity_at=moment, status=status,
    )
    turn = Turn.objects.create(
        thread=thread, organization=person.organization, user=person.user, model_option="offline",
        status=Turn.Status.DONE,
    )
    Message.objects.create(thread=thread, seq=0, role="user", content=content, created_at=moment, turn_id=turn.id)
    reply_message = Message.objects.create(
        thread=thread, seq=1, role="assistant", content=reply, created_at=moment, turn_id=turn.id,
    )
    ToolCall.objects.create(
        message=reply_message, position=0, tool_use_id="toolu_1", name="search_notes", input={"query": "zurich"},
        result={"notes": [{"id": 1, "title": "Zurich trip"}]}, created_at=moment, finished_at=moment,
    )
    return thread


def make_card(person, thread, *, status=ActionCard.Status.PENDING, warning=False, description="Delete the note “A”"):
    call = ToolCall.objects.filter(message__thread=thread).first()
    return ActionCard.objects.create(
        organization=person.organization, user=person.user, thread=thread, tool_call=call, tool_name="delete_note",
        tool_input={"note_id": 1}, description=description, snapshot_hash="a" * 64, trifecta_warning=warning,
        status=status, expires_at=timezone.now() + timedelta(hours=24),
    )

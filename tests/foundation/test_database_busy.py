"""A burst beyond the database pool (no connection free within
DATABASE_POOL_TIMEOUT) is a 503 with Retry-After on every door, not a 500:
found at 1,000 turns posted at once on two web processes (bench-turns)."""

import django.db
import pytest
from django.test import Client
from psycopg_pool import PoolTimeout

from assistant.models import Turn
from tests.conversations.factories import make_thread

pytestmark = pytest.mark.django_db


def no_connection_free(*args, **kwargs):
    """What Django raises when psycopg_pool's getconn times out."""
    try:
        raise PoolTimeout("couldn't get a connection after 30.00 sec")
    except PoolTimeout as timeout:
        raise django.db.OperationalError(str(timeout)) from timeout


TOKEN_CHECK = "assistant_engine.organizations.tokens.OrganizationTokenAuthentication.authenticate_credentials"


def test_the_api_says_busy_and_when_to_retry_and_nothing_was_written(owner, monkeypatch):
    monkeypatch.setattr(TOKEN_CHECK, no_connection_free)
    response = owner.client.post("/api/chat", {"message": "Hello"}, format="json")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert response.json()["code"] == "busy"
    assert not Turn.objects.exists()


def test_another_database_error_is_still_not_taken_for_busy(owner, monkeypatch):
    def broken(*args, **kwargs):
        raise django.db.OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(TOKEN_CHECK, broken)
    client = owner.client
    client.raise_request_exception = False
    assert client.post("/api/chat", {"message": "Hello"}, format="json").status_code == 500


def test_a_page_says_it_in_words(owner, monkeypatch):
    thread = make_thread(owner, title="Mine", messages=1)
    browser = Client()
    browser.force_login(owner.user)
    monkeypatch.setattr("assistant_engine.web.views.selectors.conversation_page", no_connection_free)
    response = browser.get(f"/c/{thread.id}/")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert response["Content-Type"].startswith("text/plain") and b"busy" in response.content

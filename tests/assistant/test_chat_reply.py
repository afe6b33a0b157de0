"""CHLOVA's synchronous reply: POST /api/chat with `Prefer: wait=N`."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.db import connections

from assistant.chat_reply import MAX_WAIT_SECONDS, requested_wait, turn_reply, wait_for_reply
from assistant.models import Turn
from conversations.models import Message
from tests.maintenance.conftest import redis_server  # noqa: F401  (the session's real redis-server)
from tests.workers import celery_worker


@pytest.mark.parametrize(("header", "seconds"), [
    (None, None), ("", None), ("respond-async", None), ("wait=5", 5), ("Wait = 5", 5), ('wait="7"', 7),
    ("respond-async, wait=10", 10), ("handling=lenient; x=1, wait=3", 3), ("wait=600", MAX_WAIT_SECONDS),
    ("wait=-1", None), ("wait=abc", None), ("wait=", None), ("waiting=5", None), ("wait=0", 0),
    # Digits of other scripts (a Latin-1 header byte is "²"): not a number of seconds (they raised: a 500).
    ("wait=\u00b2", None), ("wait=1\u00b9", None), ("wait=\u0663", None),
])
def test_the_wait_preference_is_read_as_rfc_7240_says(header, seconds):
    assert requested_wait(header) == seconds


@pytest.mark.parametrize(("header", "seconds"), [
    (None, 30), ("", 30), ("handling=lenient", 30), ("respond-async", None), ("wait=5", 5),
    ("respond-async, wait=10", 10), ("wait=0", 0),
])
def test_a_deployment_may_wait_by_default_for_the_seeds_client(settings, header, seconds):
    """Issue 34.12: CHLOVA's client sends no preference and reads `{reply, conversationId}`;
    ASSISTANT_CHAT_WAIT_SECONDS gives it that. The product's pages send respond-async."""
    settings.ASSISTANT_CHAT_WAIT_SECONDS = 30
    assert requested_wait(header) == seconds




@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_turn_that_ends_within_the_wait_answers_200_with_the_reply(owner):
    with celery_worker(OFFLINE_MODEL_CHUNK_DELAY_MS="5"):
        response = owner.client.post("/api/chat", {"message": "Hello there"}, format="json",
                                     HTTP_PREFER="wait=60")
    assert response.status_code == 200, response.content
    assert response["Preference-Applied"] == "wait=60"
    body = response.json()
    turn = Turn.objects.get(id=body["turnId"])
    assert turn.status == "done" and str(turn.thread_id) == body["conversationId"]
    final = Message.objects.filter(turn_id=turn.id, role="assistant").order_by("seq").last()
    assert body == {"reply": final.content, "conversationId": str(turn.thread_id), "turnId": str(turn.id)}
    assert body["reply"]


@pytest.mark.django_db(transaction=True)
def test_a_turn_still_running_after_the_wait_answers_202_as_today(owner):
    # No worker: the turn stays queued.
    response = owner.client.post("/api/chat", {"message": "Hello"}, format="json", HTTP_PREFER="wait=1")
    assert response.status_code == 202
    assert response["Preference-Applied"] == "wait=1"
    assert set(response.json()) == {"conversationId", "turnId", "messageId"}


@pytest.mark.django_db(transaction=True)
def test_a_wait_in_digits_of_another_script_is_ignored_not_a_500(owner):
    response = owner.client.post("/api/chat", {"message": "Hello"}, format="json", HTTP_PREFER="wait=\u00b2")
    assert response.status_code == 202 and not response.has_header("Preference-Applied")


@pytest.mark.django_db(transaction=True)
def test_without_the_preference_nothing_changes(owner):
    response = owner.client.post("/api/chat", {"message": "Hello"}, format="json")
    assert response.status_code == 202 and not response.has_header("Preference-Applied")
    zero = owner.client.post("/api/chat", {"message": "Hello"}, format="json", HTTP_PREFER="wait=0")
    assert zero.status_code == 202 and not zero.has_header("Preference-Applied")


@pytest.mark.django_db(transaction=True)
def test_refusals_are_as_today_and_never_wait(owner, outsider, anonymous):
    created = owner.client.post("/api/chat", {"message": "Hi"}, format="json").json()
    for client, body, code in (
        (owner.client, {"message": ""}, 400),
        (outsider.client, {"message": "Hi", "conversationId": created["conversationId"]}, 404),
        (owner.client, {"message": "Again", "conversationId": created["conversationId"]}, 409),
        (anonymous, {"message": "Hi"}, 401),
    ):
        response = client.post("/api/chat", body, format="json", HTTP_PREFER="wait=60")
        assert response.status_code == code
        assert "code" in response.json() and not response.has_header("Preference-Applied")


@pytest.mark.django_db(transaction=True)
def test_a_failed_turn_gives_its_notice_and_failure_kind(owner):
    created = owner.client.post("/api/chat", {"message": "Hi"}, format="json").json()
    turn = Turn.objects.get(id=created["turnId"])
    Message.objects.create(thread_id=turn.thread_id, seq=5, role="assistant", content="Half a", turn_id=turn.id,
                           notice="The model provider failed.", created_at=turn.created_at)
    assert turn_reply(turn.id) is None  # still queued
    Turn.objects.filter(id=turn.id).update(status="failed", failure_kind="api")
    reply = asyncio.run(wait_for_reply(turn.id, 5))
    # Outside a request, asgiref's one sync thread did the reads: close its
    # connection before the test database is dropped.
    asyncio.run(sync_to_async(connections.close_all)())
    assert reply == {
        "reply": "Half a", "conversationId": str(turn.thread_id), "turnId": str(turn.id),
        "notice": "The model provider failed.", "failureKind": "api",
    }


@pytest.fixture
def live_redis(redis_server, settings):  # noqa: F811
    redis_server.client.flushall()
    settings.REDIS_URL = redis_server.url
    return redis_server


@pytest.mark.worker
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_with_redis_the_wait_follows_the_published_events(owner, live_redis):
    with celery_worker(OFFLINE_MODEL_CHUNK_DELAY_MS="5", REDIS_URL=live_redis.url):
        response = owner.client.post("/api/chat", {"message": "Hello there"}, format="json",
                                     HTTP_PREFER="wait=60")
    assert response.status_code == 200, response.content
    assert response["Preference-Applied"] == "wait=60"
    turn = Turn.objects.get(id=response.json()["turnId"])
    assert turn.status == "done" and response.json()["reply"]

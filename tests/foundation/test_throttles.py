"""API throttles: per person for chat submissions, uploads and card decisions,
per address for anonymous requests; 429 `throttled` in the one error shape,
with Retry-After. The suite itself runs unthrottled (config/settings_test.py)."""

import uuid

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from conversations.models import Message, Thread


@pytest.fixture
def rates(settings):
    """Set some rates for one test; the counters start from zero."""
    cache.clear()
    settings.THROTTLE_RATES = {"chat": None, "uploads": None, "cards": None, "anon": None}

    def set_rates(**chosen):
        settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, **chosen}

    yield set_rates
    cache.clear()


def assert_throttled(response):
    assert response.status_code == 429
    body = response.json()
    assert body["code"] == "throttled" and set(body) == {"code", "detail"}
    assert 0 < int(response["Retry-After"]) <= 60


def chat(person, text="hello"):
    return person.client.post("/api/chat", {"message": text}, format="json")


def test_the_suite_is_unthrottled_unless_a_test_asks(settings):
    assert set(settings.THROTTLE_RATES.values()) == {None}


def test_chat_submissions_are_throttled_per_person_and_nothing_is_written(owner, colleague, rates):
    rates(chat="2/minute")
    assert [chat(owner).status_code for _ in range(2)] == [202, 202]
    threads, messages = Thread.objects.count(), Message.objects.count()
    assert_throttled(chat(owner, "one too many"))
    assert (Thread.objects.count(), Message.objects.count()) == (threads, messages)
    # Another person has their own allowance; reading is not counted.
    assert chat(colleague).status_code == 202
    assert owner.client.get("/api/conversations").status_code == 200


def test_uploads_are_throttled_but_reads_of_the_same_conversation_are_not(owner, rates):
    rates(uploads="1/minute")
    url = f"/api/conversations/{uuid.uuid4()}"
    assert owner.client.put(url, {}, format="json").status_code == 400  # counted, even refused
    assert_throttled(owner.client.put(url, {}, format="json"))
    assert [owner.client.get(url).status_code for _ in range(3)] == [404] * 3


def test_card_decisions_are_throttled(owner, rates):
    rates(cards="2/minute")
    card, shown_hash = uuid.uuid4(), {"hash": "a" * 64}
    assert owner.client.post(f"/api/cards/{card}/confirm", shown_hash, format="json").status_code == 404
    assert owner.client.post(f"/api/cards/{card}/cancel", {}, format="json").status_code == 404
    assert_throttled(owner.client.post(f"/api/cards/{card}/confirm", shown_hash, format="json"))
    assert owner.client.get(f"/api/cards/{card}").status_code == 404  # reading a card is not a decision


def test_anonymous_requests_are_throttled_per_address_before_401(owner, rates):
    rates(anon="2/minute")
    anonymous = APIClient()
    assert [anonymous.get("/api/conversations").status_code for _ in range(2)] == [401, 401]
    assert_throttled(anonymous.get("/api/conversations"))
    # A person with a valid token, from the same address, is not anonymous.
    assert owner.client.get("/api/conversations").status_code == 200


def test_wrong_tokens_count_as_anonymous(db, rates):
    rates(anon="2/minute")
    guesser = APIClient()
    for attempt in range(2):
        guesser.credentials(HTTP_AUTHORIZATION=f"Bearer {attempt:064x}")
        assert guesser.get("/api/conversations").status_code == 401
    guesser.credentials(HTTP_AUTHORIZATION="Bearer " + "f" * 64)
    assert_throttled(guesser.get("/api/conversations"))
    other_address = APIClient(REMOTE_ADDR="10.0.0.9")
    assert other_address.get("/api/conversations").status_code == 401

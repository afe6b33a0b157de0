"""Text is stored as it arrives, even while the model pauses: a real worker
process streams from a fake Anthropic server (the official SDK runs for real)
that sends a few words, then says nothing for seconds."""

import os
import signal

import pytest

from assistant.models import Turn
from tests.fakes.wire_servers import WireServer, anthropic_events, anthropic_sse
from tests.workers import celery_worker, wait_until

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

OPTION = "anthropic-claude-haiku-4-5"
WORDS = ("Let me ", "look at ", "your notes.")


def pausing_reply(pause: float):
    """The words, then a pause before the rest of the message (its end)."""
    reply = anthropic_sse(anthropic_events(text=WORDS), chunk_size=64)
    after_words = reply.body.index(b"your notes.")
    reply.pause_after = reply.body.index(b"\n\n", after_words) + 2
    reply.pause = pause
    return reply


@pytest.fixture
def wire(settings):
    with WireServer() as server:
        settings.ASSISTANT_MODEL = OPTION
        settings.ANTHROPIC_API_KEY = "test-key"
        settings.ASSISTANT_ALLOW_US_PROCESSING = True
        yield server


def worker_env(wire) -> dict[str, str]:
    return {
        "ASSISTANT_MODEL": OPTION, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": wire.url,
        "ASSISTANT_ALLOW_US_PROCESSING": "1",
    }


def reply_text(owner, conversation_id) -> str:
    """What a reader of the conversation sees now (the REST API, as a client polls it)."""
    messages = owner.client.get(f"/api/conversations/{conversation_id}").json()["messages"]
    return "".join(m["content"] for m in messages if m["role"] == "assistant")


def start_turn(owner) -> tuple[str, str]:
    response = owner.client.post("/api/chat", {"message": "What do my notes say?"}, format="json")
    assert response.status_code == 202, response.content
    return response.json()["conversationId"], response.json()["turnId"]


def test_a_reader_sees_the_words_while_the_model_pauses(owner, wire):
    wire.reply(pausing_reply(pause=5))
    with celery_worker(name="pause", **worker_env(wire)):
        conversation_id, turn_id = start_turn(owner)
        wait_until(wire.pausing.is_set, timeout=60)
        wait_until(lambda: reply_text(owner, conversation_id) == "".join(WORDS), timeout=4)
        assert wire.pausing.is_set()  # seen during the pause, not after it
        wait_until(lambda: Turn.objects.get(id=turn_id).status == "done", timeout=60)
    assert reply_text(owner, conversation_id) == "".join(WORDS)


def test_the_words_survive_a_worker_killed_during_the_pause(owner, wire):
    wire.reply(pausing_reply(pause=6))
    with celery_worker(name="killed", **worker_env(wire)) as worker:
        conversation_id, turn_id = start_turn(owner)
        wait_until(wire.pausing.is_set, timeout=60)
        wait_until(lambda: reply_text(owner, conversation_id) == "".join(WORDS), timeout=4)
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)
    # Nobody finished the turn (the stuck-turn job will), and the words are kept.
    assert Turn.objects.get(id=turn_id).status == "running"
    assert reply_text(owner, conversation_id) == "".join(WORDS)

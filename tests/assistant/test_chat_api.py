import json
import uuid

import pytest
from asgiref.sync import async_to_sync, sync_to_async

from assistant import chat
from assistant.loop import run_turn
from assistant.models import Turn
from assistant_engine.organizations.models import Organization
from conversations.models import Message, Thread
from credits.models import CreditAccount, LedgerEntry
from tests.assistant.conftest import Clock
from tests.conversations.factories import make_thread
from tests.fakes.scripted import ScriptedClient, call, say

CHAT = "/api/chat"


def post_chat(person, **body):
    return person.client.post(CHAT, body, format="json")


def test_owner_starts_a_conversation_and_a_queued_turn(owner):
    response = post_chat(owner, message="  Plan my week  ")
    assert response.status_code == 202
    body = response.json()
    thread = Thread.objects.get(id=body["conversationId"])
    turn = Turn.objects.get(id=body["turnId"])
    assert thread.user_id == owner.user.id and thread.status == Thread.Status.RESPONDING
    assert thread.title == "Plan my week"
    assert turn.status == Turn.Status.QUEUED and turn.model_option == "offline"
    assert Message.objects.get(id=body["messageId"]).content == "  Plan my week  "
    assert CreditAccount.objects.get(organization=owner.organization).reserved_micros == 30_000


def test_owner_continues_an_idle_conversation(owner):
    thread = make_thread(owner, messages=2)
    response = post_chat(owner, message="More", conversationId=str(thread.id))
    assert response.status_code == 202
    assert Message.objects.filter(thread=thread).order_by("seq").last().content == "More"


@pytest.mark.parametrize("who", ["colleague", "outsider"])
def test_others_cannot_post_into_the_owners_conversation(owner, colleague, outsider, who):
    thread = make_thread(owner, messages=1)
    person = {"colleague": colleague, "outsider": outsider}[who]
    response = post_chat(person, message="Sneaky", conversationId=str(thread.id))
    assert response.status_code == 404
    assert not Message.objects.filter(content="Sneaky").exists() and not Turn.objects.exists()


def test_anonymous_chat_gets_401(anonymous, db):
    assert anonymous.post(CHAT, {"message": "hi"}, format="json").status_code == 401
    assert not Thread.objects.exists()


def test_a_busy_conversation_refuses_a_second_message(owner):
    first = post_chat(owner, message="One").json()
    response = post_chat(owner, message="Two", conversationId=first["conversationId"])
    assert response.status_code == 409 and response.json()["code"] == "conversation_busy"
    assert Turn.objects.count() == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"message": ""}, "message"),
        ({"message": "   "}, "message"),
        ({"message": 42}, "message"),
        ({}, "message"),
        ({"message": "hi", "conversationId": "nope"}, "conversationId"),
        ({"message": "hi", "model": "gpt"}, "model"),
    ],
)
def test_bad_chat_input_is_a_400_naming_the_field(owner, body, field):
    response = owner.client.post(CHAT, body, format="json")
    assert response.status_code == 400 and field in response.json()["fields"]
    assert not Thread.objects.exists()


def test_exhausted_credits_are_a_402_that_writes_nothing(owner):
    Organization.objects.filter(id=owner.organization.id).update(monthly_credits=2)
    response = post_chat(owner, message="Hello")
    assert response.status_code == 402 and response.json()["code"] == "credits_exhausted"
    assert not Thread.objects.exists() and not Message.objects.exists() and not Turn.objects.exists()
    assert not LedgerEntry.objects.filter(kind="reserve").exists()


def test_a_full_conversation_is_a_409(owner, settings, full_conversations):
    thread = make_thread(owner)
    Message.objects.create(thread=thread, seq=0, role="user", content="x" * 5000, created_at=thread.created_at)
    # As an upload leaves it: the size unknown, so it is measured from the history.
    Thread.objects.filter(id=thread.id).update(next_seq=1, history_bytes=None)
    settings.ASSISTANT_HISTORY_BYTES = 4000
    response = post_chat(owner, message="more", conversationId=str(thread.id))
    assert response.status_code == 409 and response.json()["code"] == "conversation_full"
    assert Message.objects.filter(thread=thread).count() == 1


def test_the_size_a_thread_keeps_is_what_a_submission_checks(owner, settings, full_conversations):
    thread = make_thread(owner)
    Thread.objects.filter(id=thread.id).update(history_bytes=3990)  # kept by the last turn's end
    settings.ASSISTANT_HISTORY_BYTES = 4000
    assert post_chat(owner, message="x" * 11, conversationId=str(thread.id)).json()["code"] == "conversation_full"
    assert post_chat(owner, message="x" * 10, conversationId=str(thread.id)).status_code == 202


@pytest.mark.django_db(transaction=True)
def test_a_broker_that_is_down_is_a_503_and_leaves_nothing_behind(owner, monkeypatch):
    def down(turn_id):
        raise ConnectionRefusedError("broker down")

    monkeypatch.setattr(chat, "enqueue_turn", down)
    response = post_chat(owner, message="Hello")
    assert response.status_code == 503 and response.json()["code"] == "queue_unavailable"
    assert not Thread.objects.exists() and not Message.objects.exists() and not Turn.objects.exists()
    assert CreditAccount.objects.get(organization=owner.organization).reserved_micros == 0


@pytest.mark.django_db(transaction=True)
def test_a_broker_that_is_down_keeps_an_existing_conversation_idle(owner, monkeypatch):
    thread = make_thread(owner, messages=2)

    def down(turn_id):
        raise OSError("broker down")

    monkeypatch.setattr(chat, "enqueue_turn", down)
    response = post_chat(owner, message="Hello", conversationId=str(thread.id))
    assert response.status_code == 503
    thread.refresh_from_db()
    assert thread.status == Thread.Status.IDLE and Message.objects.filter(thread=thread).count() == 2


def test_the_turn_is_enqueued_only_after_commit(owner, monkeypatch, django_capture_on_commit_callbacks):
    enqueued = []
    monkeypatch.setattr(chat, "enqueue_turn", enqueued.append)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = post_chat(owner, message="Hello")
    assert enqueued == [] and len(callbacks) == 1
    callbacks[0]()
    assert [str(t) for t in enqueued] == [response.json()["turnId"]]


# --- GET /api/turns/{id} and its events ---------------------------------------


def finished_turn(person):
    body = post_chat(person, message="Find Zurich").json()
    client = ScriptedClient(call(("search_notes", {"query": "Zurich"}), text="Looking."), say("Nothing <b>found</b>."))
    run_turn(uuid.UUID(body["turnId"]), client=client, clock=Clock())
    return body


def test_owner_reads_the_turn_status(owner):
    body = finished_turn(owner)
    response = owner.client.get(f"/api/turns/{body['turnId']}")
    assert response.status_code == 200
    data = response.json()
    assert data["status"] == "done" and data["failureKind"] is None and data["steps"] == 2
    assert data["messageIds"][0] == body["messageId"] and len(data["messageIds"]) == 3


@pytest.mark.parametrize("who", ["colleague", "outsider"])
def test_others_get_404_on_the_turn_and_its_events(owner, colleague, outsider, who):
    body = finished_turn(owner)
    person = {"colleague": colleague, "outsider": outsider}[who]
    assert person.client.get(f"/api/turns/{body['turnId']}").status_code == 404
    assert person.client.get(f"/api/turns/{body['turnId']}/events").status_code == 404


def test_anonymous_gets_401_on_turns(owner, anonymous):
    body = finished_turn(owner)
    assert anonymous.get(f"/api/turns/{body['turnId']}").status_code == 401
    assert anonymous.get(f"/api/turns/{body['turnId']}/events").status_code == 401


def parse_sse(raw: str) -> list[tuple[str, dict]]:
    events = []
    for frame in raw.replace("\r\n", "\n").split("\n\n"):
        lines = dict(line.split(": ", 1) for line in frame.splitlines() if line and not line.startswith(":"))
        if "event" in lines:
            events.append((lines["event"], json.loads(lines["data"])))
    return events


def read_stream(response) -> str:
    """The whole body of a streamed response (async under ASGI, the test
    client's WSGI request gets the blocking adapter), read in this thread."""

    async def collect():
        return b"".join([chunk async for chunk in response.streaming_content])

    if response.is_async:
        return async_to_sync(collect)().decode()
    return b"".join(response.streaming_content).decode()


def test_the_event_stream_replays_a_finished_turn_in_order(owner):
    body = finished_turn(owner)
    response = owner.client.get(f"/api/turns/{body['turnId']}/events", HTTP_ACCEPT="text/event-stream")
    assert response.status_code == 200 and response["Content-Type"] == "text/event-stream"
    events = parse_sse(read_stream(response))
    names = [name for name, _ in events]
    assert names == ["message_started", "text", "tool_call_started", "tool_call_finished",
                     "message_started", "text", "turn_ended"]
    text = "".join(data["delta"] for name, data in events if name == "text")
    assert text == "Looking.Nothing <b>found</b>."
    assert events[2][1]["name"] == "search_notes" and events[-1][1]["status"] == "done"


def test_the_event_stream_polls_a_running_turn_without_redis(owner, settings):
    """Without REDIS_URL the stream reads what the worker writes: deltas arrive as the message grows."""
    from assistant import live
    from assistant.progress import Cursor

    settings.REDIS_URL = ""
    body = post_chat(owner, message="Hi").json()
    turn = Turn.objects.get(id=body["turnId"])
    Turn.objects.filter(id=turn.id).update(status="running")
    reply = Message.objects.create(thread_id=turn.thread_id, turn_id=turn.id, seq=1, role="assistant",
                                   content="Hel", status="streaming", created_at=turn.created_at)
    writes = iter(["Hello", "Hello, world"])

    def worker_writes():
        try:
            Message.objects.filter(id=reply.id).update(content=next(writes))
        except StopIteration:
            Turn.objects.filter(id=turn.id).update(status="done")

    async def sleep(_):
        await sync_to_async(worker_writes)()

    async def collect():
        return [event async for event in live.poll_turn(turn.id, Cursor(), sleep=sleep) if event]

    events = async_to_sync(collect)()
    assert [e.data["delta"] for e in events if e.name == "text"] == ["Hel", "lo", ", world"]
    assert events[-1].name == "turn_ended"


def test_a_polled_stream_of_a_silent_turn_sends_heartbeats_then_ends(owner, settings):
    """Nothing happens: a heartbeat (None) each time STREAM_HEARTBEAT_SECONDS pass
    without an event, and the stream ends at STREAM_MAX_SECONDS, both doors."""
    import time

    from assistant import live
    from assistant.progress import Cursor

    settings.REDIS_URL = ""
    settings.STREAM_HEARTBEAT_SECONDS, settings.STREAM_MAX_SECONDS = 0.02, 0.2
    turn = Turn.objects.get(id=post_chat(owner, message="Hi").json()["turnId"])
    Turn.objects.filter(id=turn.id).update(status="running")

    blocking = list(live.poll_turn_blocking(turn.id, Cursor(), sleep=lambda _: time.sleep(0.01)))
    assert blocking and set(blocking) == {None} and len(blocking) < 20  # paced, not one per poll

    async def collect():
        async def sleep(_):
            await sync_to_async(time.sleep)(0.01)
        return [event async for event in live.poll_turn(turn.id, Cursor(), sleep=sleep)]

    polled = async_to_sync(collect)()
    assert polled and set(polled) == {None} and len(polled) < 20


def test_a_first_message_over_the_bound_is_a_409_full_and_writes_nothing(owner, settings, full_conversations):
    settings.ASSISTANT_HISTORY_BYTES = 1000
    response = post_chat(owner, message="x" * 1001)
    assert response.status_code == 409 and response.json()["code"] == "conversation_full"
    assert not Thread.objects.exists()

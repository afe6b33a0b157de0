"""The events stream: a resumable cursor, the worker's publications on Redis
forwarded without a query while the turn waits, the database read on
connection, on a gap and at the end."""

import asyncio
import json
import uuid

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.db import connections
from django.test import AsyncClient, TestCase
from django.test.utils import CaptureQueriesContext
from django.urls import resolve

from assistant import live, progress
from assistant.loop import run_turn
from assistant.models import Turn
from assistant.progress import BadCursor, Cursor
from conversations.models import Message
from tests.assistant.conftest import Clock
from tests.assistant.test_chat_api import finished_turn, parse_sse, post_chat, read_stream
from tests.fakes.scripted import ScriptedClient, call, say
from tests.maintenance.conftest import free_port, running_turn
from workspace.models import Note

# --- The cursor (pure) ------------------------------------------------------------


def test_a_cursor_round_trips_through_its_event_id():
    cursor = Cursor(seq=7, text=120, started=2, finished=1, cards=1)
    assert Cursor.decode(cursor.encode()) == cursor
    assert Cursor.decode("-1.0.0.0.0") == Cursor()


@pytest.mark.parametrize("raw", ["", "1.2.3.4", "a.b.c.d.e", "1.2.3.4.5.6", "-2.0.0.0.0", "1.2.3.4.99999999"])
def test_a_malformed_cursor_is_refused(raw):
    with pytest.raises(BadCursor):
        Cursor.decode(raw)


def text(seq, offset, delta, n=1):
    return {"kind": "text", "n": n, "messageId": "m", "seq": seq, "offset": offset, "delta": delta, "at": 0}


def test_a_publication_already_sent_gives_nothing_and_a_partial_one_gives_the_rest():
    cursor = Cursor(seq=3, text=5)
    assert progress.apply_published(cursor, text(3, 0, "Hello")) == []
    events = progress.apply_published(cursor, text(3, 2, "llo, world"))
    assert [(e.name, e.data["delta"], e.id) for e in events] == [("text", ", world", "3.12.0.0.0")]


def test_a_publication_past_the_cursor_is_a_gap_and_leaves_the_cursor_alone():
    cursor = Cursor(seq=3, text=5)
    assert progress.apply_published(cursor, text(3, 9, "later")) is None
    assert progress.apply_published(cursor, text(4, 3, "middle of a new reply")) is None
    finished_first = {"kind": "tool_call_finished", "n": 1, "messageId": "m", "seq": 3, "position": 0, "call": {}}
    assert progress.apply_published(cursor, finished_first) is None  # never started
    assert progress.apply_published(cursor, {"kind": "turn_ended", "n": 2}) is None  # read the end from the database
    assert cursor == Cursor(seq=3, text=5)


def test_a_new_reply_is_announced_before_its_text():
    cursor = Cursor(seq=3, text=5, started=1, finished=1)
    events = progress.apply_published(cursor, text(5, 0, "Next"))
    assert [e.name for e in events] == ["message_started", "text"] and cursor == Cursor(seq=5, text=4)


# --- Resuming with Last-Event-ID (the database) ---------------------------------------


def test_a_client_that_reconnects_with_last_event_id_gets_only_what_it_missed(owner):
    body = finished_turn(owner)
    url = f"/api/turns/{body['turnId']}/events"
    whole = read_stream(owner.client.get(url))
    ids = [line.split(": ", 1)[1] for line in whole.splitlines() if line.startswith("id: ")]
    assert len(ids) == 7 and len(set(ids)) == 6  # turn_ended moves nothing on
    resumed = read_stream(owner.client.get(url, HTTP_LAST_EVENT_ID=ids[2]))
    assert parse_sse(resumed) == parse_sse(whole)[3:]
    reopened = read_stream(owner.client.get(f"{url}?lastEventId={ids[4]}"))  # the page reopening it
    assert parse_sse(reopened) == parse_sse(whole)[5:]


def test_a_last_event_id_that_is_not_ours_is_a_400(owner):
    body = finished_turn(owner)
    response = owner.client.get(f"/api/turns/{body['turnId']}/events", HTTP_LAST_EVENT_ID="12; DROP")
    assert response.status_code == 400 and response.json()["code"] == "invalid_last_event_id"


def test_under_asgi_the_endpoint_streams_from_an_async_generator(owner):
    body = finished_turn(owner)
    token = owner.token

    async def get(**headers):
        response = await AsyncClient().get(f"/api/turns/{body['turnId']}/events",
                                           headers={"Authorization": f"Bearer {token}", **headers})
        return response, (b"".join([c async for c in response.streaming_content]).decode()
                          if response.status_code == 200 else response.json())

    response, whole = async_to_sync(get)()
    assert response.status_code == 200 and response.is_async
    assert [name for name, _ in parse_sse(whole)][-1] == "turn_ended"
    assert parse_sse(whole) == parse_sse(read_stream(owner.client.get(f"/api/turns/{body['turnId']}/events")))
    refused, error = async_to_sync(get)(**{"Last-Event-ID": "nope"})
    assert refused.status_code == 400 and error["code"] == "invalid_last_event_id"


def test_the_events_endpoint_is_an_async_view_still_documented(owner):
    match = resolve(f"/api/turns/{uuid.uuid4()}/events")
    assert asyncio.iscoroutinefunction(match.func)
    schema = owner.client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert "/api/turns/{turn_id}/events" in schema["paths"]


# --- The worker publishes (Redis) ---------------------------------------------------------


@pytest.mark.redis
def test_the_loop_publishes_each_step_and_the_publications_alone_rebuild_the_stream(
    owner, live_redis, django_capture_on_commit_callbacks
):
    turn_id = uuid.UUID(post_chat(owner, message="Find Zurich").json()["turnId"])
    subscriber = live_redis.client.pubsub(ignore_subscribe_messages=True)
    subscriber.subscribe(live.channel(turn_id))
    client = ScriptedClient(call(("search_notes", {"query": "Zurich"}), text="Looking."), say("Nothing found."))
    with django_capture_on_commit_callbacks(execute=True):  # the end is published once committed
        run_turn(turn_id, client=client, clock=Clock())
    published = []
    for _ in range(50):  # None also stands for the swallowed subscribe confirmation
        message = subscriber.get_message(timeout=0.1)
        if message is not None:
            published.append(json.loads(message["data"]))
        if published and published[-1]["kind"] == "turn_ended":
            break
    subscriber.close()

    assert [p["kind"] for p in published] == ["text", "tool_call_started", "tool_call_finished", "text", "turn_ended"]
    assert [p["n"] for p in published] == [1, 2, 3, 4, 5]
    cursor, forwarded = Cursor(), []
    for publication in published[:-1]:
        forwarded += progress.apply_published(cursor, publication)
    replayed, ended = progress.turn_events(turn_id, Cursor())
    assert ended and replayed[-1].name == "turn_ended"
    assert [(e.name, e.id) for e in forwarded] == [(e.name, e.id) for e in replayed[:-1]]
    assert [{k: v for k, v in e.data.items() if k != "at"} for e in forwarded] == [e.data for e in replayed[:-1]]


@pytest.mark.redis
def test_a_proposed_card_is_published_with_its_place_in_the_turn(owner, live_redis, django_capture_on_commit_callbacks):
    note = Note.objects.create(organization=owner.organization, owner=owner.user, title="Old", body="x")
    turn_id = uuid.UUID(post_chat(owner, message="Delete Old").json()["turnId"])
    subscriber = live_redis.client.pubsub(ignore_subscribe_messages=True)
    subscriber.subscribe(live.channel(turn_id))
    client = ScriptedClient(call(("delete_note", {"note_id": note.id})), say("Confirm it on the card."))
    with django_capture_on_commit_callbacks(execute=True):
        run_turn(turn_id, client=client, clock=Clock())
    published = []
    for _ in range(50):
        message = subscriber.get_message(timeout=0.1)
        if message is not None:
            published.append(json.loads(message["data"]))
        if published and published[-1]["kind"] == "turn_ended":
            break
    subscriber.close()

    kinds = [p["kind"] for p in published]
    assert kinds == ["tool_call_started", "card_proposed", "tool_call_finished", "text", "turn_ended"]
    card = published[1]
    assert card["index"] == 0 and card["card"]["toolName"] == "delete_note" and card["card"]["status"] == "pending"
    cursor = Cursor()
    forwarded = [e for p in published[:-1] for e in progress.apply_published(cursor, p)]
    replayed, _ = progress.turn_events(turn_id, Cursor())
    # The same events; the database lists cards last.
    assert sorted(e.name for e in forwarded) == sorted(e.name for e in replayed[:-1])
    assert cursor.encode() == replayed[-1].id
    assert Note.objects.filter(id=note.id).exists()  # only proposed


# --- The web forwards: no query while the turn waits ------------------------------------------


async def take(stream, count):
    return [await anext(stream) for _ in range(count)]


def test_polling_without_redis_reads_the_database_while_the_turn_waits(owner, settings):
    """The counter of the next test sees the stream's queries: here, polling."""
    settings.REDIS_URL, settings.STREAM_POLL_SECONDS, settings.STREAM_HEARTBEAT_SECONDS = "", 0.05, 0.2
    turn = running_turn(owner, partial="Hel", seconds_ago=1)

    async def wait_a_while(queries):
        stream = live.follow_turn(turn.id, Cursor())
        await take(stream, 2)  # message_started, text
        before = len(queries)
        assert await take(stream, 2) == [None, None]  # keep-alives while the model thinks
        waited = len(queries) - before
        await stream.aclose()
        return waited

    with CaptureQueriesContext(connections["default"]) as queries:
        waited = async_to_sync(wait_a_while)(queries)
    assert waited >= 4 * 4  # 4 queries a poll, at least 4 polls


@pytest.mark.redis
def test_an_open_stream_waiting_on_its_model_costs_no_query(owner, live_redis, settings):
    settings.STREAM_HEARTBEAT_SECONDS = 0.2
    turn = running_turn(owner, partial="Hel", seconds_ago=1)
    reply = Message.objects.get(turn_id=turn.id, role="assistant")

    def worker_writes(content, *, lose_publication=False):
        Message.objects.filter(id=reply.id).update(content=content)
        if lose_publication:  # as if Redis had dropped one
            live._turns[turn.id].n += 1
        reply.content = content
        live.publish_text(turn.id, reply, content)

    def worker_ends():
        Turn.objects.filter(id=turn.id).update(status="done")
        with TestCase.captureOnCommitCallbacks(execute=True):
            live.publish_turn_ended(turn.id)

    async def scenario(queries):
        marks = {}
        stream = live.follow_turn(turn.id, Cursor())
        caught_up = await take(stream, 2)
        marks["connected"] = len(queries)
        assert await take(stream, 5) == [None] * 5  # a second of waiting: keep-alives only
        await sync_to_async(worker_writes)("Hello")
        forwarded = await take(stream, 1)
        marks["waited"] = len(queries)
        await sync_to_async(worker_writes)("Hello, world", lose_publication=True)
        await sync_to_async(worker_writes)("Hello, world!")
        after_gap = await take(stream, 1)
        marks["gap"] = len(queries)
        await sync_to_async(worker_ends)()
        ending = [event async for event in stream]
        marks["end"] = len(queries)
        return caught_up, forwarded, after_gap, ending, marks

    with CaptureQueriesContext(connections["default"]) as queries:
        caught_up, forwarded, after_gap, ending, marks = async_to_sync(scenario)(queries)

    assert [e.name for e in caught_up] == ["message_started", "text"] and caught_up[1].data["delta"] == "Hel"
    assert marks["connected"] == 4  # the catch-up: turn, messages, tool calls, cards
    assert [(e.name, e.data["delta"]) for e in forwarded] == [("text", "lo")]
    assert marks["waited"] - marks["connected"] == 1  # only the test's own write: the stream made none
    # A lost publication: the next one is out of order, so the database is read once.
    assert [(e.name, e.data["delta"]) for e in after_gap] == [("text", ", world!")]
    assert marks["gap"] - marks["waited"] == 2 + 4
    assert [e.name for e in ending] == ["turn_ended"] and ending[0].data["status"] == "done"
    assert marks["end"] - marks["gap"] == 1 + 4


# --- Redis down: never a failed turn, never a dead stream ---------------------------------------


def dead_redis_url() -> str:
    return f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there


def test_a_redis_that_is_down_does_not_fail_the_turn_and_is_tried_once_more_at_the_end(owner, settings, caplog,
                                                                                     django_capture_on_commit_callbacks):
    settings.REDIS_URL = dead_redis_url()
    turn_id = uuid.UUID(post_chat(owner, message="Find Zurich").json()["turnId"])
    client = ScriptedClient(call(("search_notes", {"query": "Zurich"}), text="Looking."), say("Nothing found."))
    with caplog.at_level("WARNING", logger="assistant.live"), django_capture_on_commit_callbacks(execute=True):
        run_turn(turn_id, client=client, clock=Clock())
    assert Turn.objects.get(id=turn_id).status == "done"
    failures = [record for record in caplog.records if record.getMessage() == "live_publish_failed"]
    assert [record.kind for record in failures] == ["text", "turn_ended"]  # not on every step
    assert all(record.turn_id == str(turn_id) for record in failures)


def test_a_stream_whose_redis_is_down_falls_back_to_the_database(owner, settings):
    settings.REDIS_URL = dead_redis_url()
    body = finished_turn(owner)

    async def collect():
        return [event async for event in live.follow_turn(uuid.UUID(body["turnId"]), Cursor()) if event]

    events = async_to_sync(collect)()
    assert [e.name for e in events][-1] == "turn_ended" and len(events) == 7


# --- One Redis connection per web process -------------------------------------------------------


@pytest.mark.redis
def test_streams_of_one_process_share_one_subscription_until_the_last_leaves(owner, live_redis, settings):
    settings.STREAM_HEARTBEAT_SECONDS = 5
    turn = running_turn(owner, partial="Hel", seconds_ago=1)
    reply = Message.objects.get(turn_id=turn.id, role="assistant")
    name = live.channel(turn.id)

    def subscribers():
        return live_redis.client.pubsub_numsub(name)[0][1]

    def worker_writes(content):
        Message.objects.filter(id=reply.id).update(content=content)
        reply.content = content
        live.publish_text(turn.id, reply, content)

    async def scenario():
        first, second = live.follow_turn(turn.id, Cursor()), live.follow_turn(turn.id, Cursor())
        await take(first, 2)
        await take(second, 2)
        shared = await sync_to_async(subscribers)()
        await sync_to_async(worker_writes)("Hello")
        both = [(await take(first, 1))[0].data["delta"], (await take(second, 1))[0].data["delta"]]
        await first.aclose()  # a closed tab
        after_one_left = await sync_to_async(subscribers)()
        await sync_to_async(worker_writes)("Hello!")
        still = (await take(second, 1))[0].data["delta"]
        await second.aclose()
        return shared, both, after_one_left, still, await sync_to_async(subscribers)()

    shared, both, after_one_left, still, at_the_end = async_to_sync(scenario)()
    assert (shared, both, after_one_left, still, at_the_end) == (1, ["lo", "lo"], 1, "!", 0)


@pytest.mark.redis
def test_a_stream_whose_subscription_is_lost_falls_back_to_the_database(owner, live_redis, settings):
    settings.STREAM_HEARTBEAT_SECONDS, settings.STREAM_POLL_SECONDS = 5, 0.05
    turn = running_turn(owner, partial="Hel", seconds_ago=1)

    def redis_drops_subscribers_and_the_turn_ends():
        live_redis.client.client_kill_filter(_type="pubsub")
        Message.objects.filter(turn_id=turn.id, role="assistant").update(content="Hello")
        Turn.objects.filter(id=turn.id).update(status="done")

    async def scenario():
        stream = live.follow_turn(turn.id, Cursor())
        await take(stream, 2)
        await sync_to_async(redis_drops_subscribers_and_the_turn_ends)()
        return [event async for event in stream if event]

    rest = async_to_sync(scenario)()
    assert [(e.name, e.data.get("delta")) for e in rest] == [("text", "lo"), ("turn_ended", None)]

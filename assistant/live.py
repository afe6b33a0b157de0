"""Live progress through Redis pub/sub: the worker publishes, the web forwards.

With `REDIS_URL`, the worker publishes each step of a turn (text written, a
tool call started or finished, a card proposed, the turn ended) on one channel
per turn, right after writing it to the database. An open stream
(`GET /api/turns/{id}/events`) subscribes first, reads the database once (the
catch-up from `Last-Event-ID`), then forwards publications without a query
while it waits; it reads the database again only when a publication shows that
something was missed, and once at the end. Pub/sub is at-most-once, so the
database stays the truth and each publication is numbered per turn (`n`) to
make a loss visible. Without Redis the stream polls the database.

Publishing never fails a turn: a Redis error is logged (ids only) and the
stream's next database read catches up.
"""

import asyncio
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from uuid import UUID

import redis
import redis.asyncio
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection, transaction

from assistant import progress
from assistant.progress import Cursor, Event

logger = logging.getLogger("assistant.live")


def channel(turn_id: UUID | str) -> str:
    return f"turn:{turn_id}:events"


# --- Publishing (the worker) ------------------------------------------------------


@dataclass
class _Published:
    """What this process published for one turn (a turn runs in one process)."""

    n: int = 0
    cards: int = 0
    text: dict[UUID, int] = field(default_factory=dict)  # characters published per reply
    failed: bool = False  # Redis failed once: don't slow the turn down on every step


_turns: dict[UUID, _Published] = {}
_client: tuple[int, str, redis.Redis] | None = None


def _redis() -> redis.Redis:
    """One client per process, made after the fork (Celery's prefork children)."""
    global _client
    if _client is None or _client[:2] != (os.getpid(), settings.REDIS_URL):
        client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=1)
        _client = (os.getpid(), settings.REDIS_URL, client)
    return _client[2]


def _publish(turn_id: UUID, kind: str, **data) -> None:
    if not settings.REDIS_URL:
        return
    state = _turns.setdefault(turn_id, _Published())
    state.n += 1  # counted even when it fails, so the next one shows the gap
    if state.failed and kind != "turn_ended":
        return
    try:
        _redis().publish(channel(turn_id), json.dumps({"kind": kind, "n": state.n, **data}, ensure_ascii=False))
    except redis.RedisError as error:
        state.failed = True
        logger.warning("live_publish_failed", extra={"turn_id": str(turn_id), "kind": kind,
                                                      "error": type(error).__name__})


def publish_text(turn_id: UUID, reply, text: str) -> None:
    """The reply's text as just written to the database (its whole text so far)."""
    if not settings.REDIS_URL:
        return
    state = _turns.setdefault(turn_id, _Published())
    offset = state.text.get(reply.id, 0)
    if len(text) <= offset:
        return
    state.text[reply.id] = len(text)
    _publish(turn_id, "text", messageId=str(reply.id), seq=reply.seq, offset=offset, delta=text[offset:],
             at=round(time.time() * 1000))


def publish_tool_call_started(record) -> None:
    """`record` is a ToolCall whose `message` (the reply) is loaded: no query."""
    _publish(record.message.turn_id, "tool_call_started", messageId=str(record.message_id),
             seq=record.message.seq, position=record.position, call=progress.tool_call_started_json(record))


def publish_tool_call_finished(record) -> None:
    _publish(record.message.turn_id, "tool_call_finished", messageId=str(record.message_id),
             seq=record.message.seq, position=record.position, call=progress.tool_call_finished_json(record))


def publish_card_proposed(card) -> None:
    if not settings.REDIS_URL:
        return
    state = _turns.setdefault(card.turn_id, _Published())
    _publish(card.turn_id, "card_proposed", index=state.cards, card=progress.card_json(card))
    state.cards += 1


def publish_turn_ended(turn_id: UUID) -> None:
    """Once the end is committed (the stream reads the end from the database,
    so it must be there): at once outside a transaction, else on commit."""

    def publish() -> None:
        _publish(turn_id, "turn_ended")
        _turns.pop(turn_id, None)

    transaction.on_commit(publish)


# --- Following (the web) ---------------------------------------------------------

def release_database() -> None:
    """An open stream must not hold a database connection while it waits (a
    thousand streams would be a thousand idle PostgreSQL backends): close this
    thread's connection after each read. Never inside a transaction."""
    if not connection.in_atomic_block:
        connection.close()


def _read_and_release(turn_id: UUID, cursor: Cursor) -> tuple[list[Event], bool]:
    try:
        return progress.turn_events(turn_id, cursor)
    finally:
        release_database()


catch_up: Callable[[UUID, Cursor], Awaitable[tuple[list[Event], bool]]] = sync_to_async(_read_and_release)


async def follow_turn(turn_id: UUID, cursor: Cursor) -> AsyncIterator[Event | None]:
    """The turn's events from `cursor` until it ends; None is a keep-alive.
    Cancelled when the client goes away: the subscription is closed at once."""
    if not settings.REDIS_URL:
        async for item in poll_turn(turn_id, cursor):
            yield item
        return
    client = redis.asyncio.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2)
    pubsub = client.pubsub()
    try:
        try:
            await _subscribe(pubsub, channel(turn_id))
        except (redis.RedisError, TimeoutError) as error:
            logger.warning("live_subscribe_failed", extra={"turn_id": str(turn_id), "error": type(error).__name__})
            async for item in poll_turn(turn_id, cursor):
                yield item
            return
        async for item in _forward(pubsub, turn_id, cursor):
            yield item
    finally:
        await _close(pubsub, client)


async def _subscribe(pubsub, name: str) -> None:
    """Returns once Redis confirmed the subscription, so that the catch-up read
    that follows can miss nothing: a later write is published to us."""
    await pubsub.subscribe(name)
    async with asyncio.timeout(5):
        while True:
            message = await pubsub.get_message(timeout=1)
            if message is not None and message["type"] == "subscribe":
                return


async def _forward(pubsub, turn_id: UUID, cursor: Cursor) -> AsyncIterator[Event | None]:
    # Subscribed before this read: whatever is published from now on arrives,
    # and whatever was published before is in the database already.
    events, ended = await catch_up(turn_id, cursor)
    for event in events:
        yield event
    if ended:
        return
    clock, last_n = time.monotonic, None
    deadline, last_sent = clock() + settings.STREAM_MAX_SECONDS, clock()
    while clock() < deadline:
        wait = max(0.01, settings.STREAM_HEARTBEAT_SECONDS - (clock() - last_sent))
        try:
            message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=wait)
        except redis.RedisError as error:
            logger.warning("live_subscription_lost", extra={"turn_id": str(turn_id), "error": type(error).__name__})
            async for item in poll_turn(turn_id, cursor):
                yield item
            return
        if message is None:  # nothing within the keep-alive interval
            if clock() - last_sent >= settings.STREAM_HEARTBEAT_SECONDS:
                last_sent = clock()
                yield None
            continue
        published = json.loads(message["data"])
        in_order = last_n is None or published.get("n") == last_n + 1
        last_n = published.get("n")
        events = progress.apply_published(cursor, published) if in_order else None
        ended = False
        if events is None:  # a gap or the end: the database is the truth
            events, ended = await catch_up(turn_id, cursor)
        for event in events:
            yield event
        if events:
            last_sent = clock()
        if ended:
            return


async def poll_turn(turn_id: UUID, cursor: Cursor, *, sleep=asyncio.sleep) -> AsyncIterator[Event | None]:
    """Without Redis (the embedded default): read the database a few times a second."""
    clock = time.monotonic
    deadline = last_sent = clock()
    deadline += settings.STREAM_MAX_SECONDS
    while clock() < deadline:
        events, ended = await catch_up(turn_id, cursor)
        for event in events:
            yield event
        if ended:
            return
        if events:
            last_sent = clock()
        elif clock() - last_sent >= settings.STREAM_HEARTBEAT_SECONDS:
            last_sent = clock()
            yield None
        await sleep(settings.STREAM_POLL_SECONDS)


def poll_turn_blocking(turn_id: UUID, cursor: Cursor, *, sleep=time.sleep) -> Iterator[Event | None]:
    """Under WSGI (`make run`'s dev server, the test client) a stream holds its
    thread anyway: it polls the database from it, as `poll_turn` does."""
    clock = time.monotonic
    deadline = last_sent = clock()
    deadline += settings.STREAM_MAX_SECONDS
    while clock() < deadline:
        events, ended = progress.turn_events(turn_id, cursor)
        yield from events
        if ended:
            return
        if events:
            last_sent = clock()
        elif clock() - last_sent >= settings.STREAM_HEARTBEAT_SECONDS:
            last_sent = clock()
            yield None
        sleep(settings.STREAM_POLL_SECONDS)


async def _close(pubsub, client) -> None:
    try:
        await pubsub.unsubscribe()
        await pubsub.aclose()
    except redis.RedisError:
        pass  # the connection is gone already: nothing left to release
    finally:
        await client.aclose()

"""Live progress through Redis pub/sub: the worker publishes, the web forwards.

With `REDIS_URL`, the worker publishes each step of a turn (text written, a
tool call started or finished, a card proposed, the turn ended) on one channel
per turn, right after writing it to the database. An open stream
(`GET /api/turns/{id}/events`) subscribes first, reads the database once (the
catch-up from `Last-Event-ID`), then forwards publications without a query
while it waits; it reads the database again only when a publication shows that
something was missed, and once at the end. Pub/sub is at-most-once, so the
database stays the truth and each publication is numbered per turn (`n`) to
make a loss visible. Without Redis the stream polls the database (assistant.polled).

Publishing never fails a turn: a Redis error is logged (ids only) and the
stream's next database read catches up.
"""

import asyncio
import collections
import json
import logging
import os
import time
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from uuid import UUID

import redis
import redis.asyncio
from django.conf import settings
from django.db import transaction

from assistant import progress
from assistant.polled import (  # noqa: F401  (the stream's doors call them through this module)
    catch_up,
    poll_turn,
    poll_turn_blocking,
    read_slot,
    release_database,
)
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

async def follow_turn(turn_id: UUID, cursor: Cursor) -> AsyncIterator[Event | None]:
    """The turn's events from `cursor` until it ends; None is a keep-alive.
    Cancelled when the client goes away: it leaves the subscription at once."""
    if not settings.REDIS_URL:
        async for item in poll_turn(turn_id, cursor):
            yield item
        return
    name = channel(turn_id)
    try:
        hub, inbox = await _Hub.join(name)
    except (redis.RedisError, TimeoutError) as error:
        logger.warning("live_subscribe_failed", extra={"turn_id": str(turn_id), "error": type(error).__name__})
        async for item in poll_turn(turn_id, cursor):
            yield item
        return
    try:
        async for item in _forward(inbox, turn_id, cursor):
            yield item
    finally:
        await hub.leave(name, inbox)


async def _forward(inbox: asyncio.Queue, turn_id: UUID, cursor: Cursor) -> AsyncIterator[Event | None]:
    # Subscribed (confirmed) before this read: whatever is published from now
    # on arrives, and whatever was published before is in the database already.
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
            data = await asyncio.wait_for(inbox.get(), wait)
        except TimeoutError:  # nothing within the keep-alive interval
            last_sent = clock()
            yield None
            continue
        if data is _LOST:
            logger.warning("live_subscription_lost", extra={"turn_id": str(turn_id)})
            async for item in poll_turn(turn_id, cursor):
                yield item
            return
        published = json.loads(data)
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


_LOST = object()  # put in every inbox when the hub's Redis connection fails


class _Hub:
    """The open streams of one web process (one event loop) share one Redis
    connection: one SUBSCRIBE per channel however many streams follow it, each
    publication copied into the inbox of each of them. The hub closes when its
    last stream leaves."""

    INBOX_SIZE = 1000  # a stream that falls this far behind loses the oldest: its gap is then read from the database
    _by_loop: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Hub]" = weakref.WeakKeyDictionary()

    def __init__(self) -> None:
        self.client = redis.asyncio.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2)
        self.pubsub = self.client.pubsub()
        self.inboxes: dict[str, set[asyncio.Queue]] = {}
        # Per channel: the current subscription's confirmation, and every
        # SUBSCRIBE sent and not yet confirmed (Redis confirms in order).
        self.subscribed: dict[str, asyncio.Future] = {}
        self.confirmations: dict[str, collections.deque[asyncio.Future]] = {}
        self.lock = asyncio.Lock()
        self.reader: asyncio.Task | None = None
        self.closed = False

    @classmethod
    async def join(cls, name: str) -> tuple["_Hub", asyncio.Queue]:
        """Subscribes (once Redis confirmed it) and returns the hub and an inbox."""
        loop = asyncio.get_running_loop()
        while True:
            hub = cls._by_loop.get(loop)
            if hub is None or hub.closed:
                hub = cls._by_loop[loop] = cls()
            inbox = await hub._add(name)
            if inbox is not None:
                return hub, inbox

    async def _add(self, name: str) -> asyncio.Queue | None:
        inbox: asyncio.Queue = asyncio.Queue(maxsize=self.INBOX_SIZE)
        async with self.lock:
            if self.closed:
                return None  # closed meanwhile: join makes a new one
            self.inboxes.setdefault(name, set()).add(inbox)
            if name not in self.subscribed:
                confirmed = self.subscribed[name] = asyncio.get_running_loop().create_future()
                self.confirmations.setdefault(name, collections.deque()).append(confirmed)
                try:
                    await self.pubsub.subscribe(name)
                except BaseException:
                    await self._remove(name, inbox)
                    raise
                if self.reader is None:
                    self.reader = asyncio.create_task(self._read())
            confirmed = self.subscribed[name]
        try:  # the first stream of the channel may still be waiting for it too
            async with asyncio.timeout(5):
                await asyncio.shield(confirmed)
        except BaseException:
            await self.leave(name, inbox)
            raise
        return inbox

    async def leave(self, name: str, inbox: asyncio.Queue) -> None:
        async with self.lock:
            await self._remove(name, inbox)

    async def _remove(self, name: str, inbox: asyncio.Queue) -> None:
        inboxes = self.inboxes.get(name, set())
        inboxes.discard(inbox)
        if inboxes or self.closed:
            return
        self.inboxes.pop(name, None)
        self.subscribed.pop(name, None)
        if self.inboxes:
            try:
                await self.pubsub.unsubscribe(name)
            except redis.RedisError:
                await self._close()
        else:
            await self._close()  # the last stream left: no idle connection stays open

    async def _read(self) -> None:
        try:
            while True:
                message = await self.pubsub.get_message(timeout=1.0)
                if message is not None:
                    self._dispatch(message)
        except redis.RedisError:
            async with self.lock:
                if self.closed:
                    return  # closed by the last stream leaving: nobody to warn
                for inboxes in self.inboxes.values():
                    for inbox in inboxes:
                        _deliver(inbox, _LOST)
                await self._close()

    def _dispatch(self, message: dict) -> None:
        name = message["channel"].decode()
        if message["type"] == "subscribe":
            waiting = self.confirmations.get(name)
            if waiting:
                confirmed = waiting.popleft()
                if not confirmed.done():
                    confirmed.set_result(None)
        elif message["type"] == "message":
            for inbox in self.inboxes.get(name, ()):
                _deliver(inbox, message["data"])

    async def _close(self) -> None:
        """Under the lock."""
        self.closed = True
        if self.reader is not None and self.reader is not asyncio.current_task():
            self.reader.cancel()
        try:
            await self.pubsub.aclose()
        except redis.RedisError:
            pass  # the connection is gone already: nothing left to release
        finally:
            await self.client.aclose()


def _deliver(inbox: asyncio.Queue, data) -> None:
    if inbox.full():
        inbox.get_nowait()  # the oldest goes: the stream sees a gap in `n` and reads the database
    inbox.put_nowait(data)

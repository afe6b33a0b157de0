"""The database side of a turn's stream: its reads, bounded per web process,
and the polled stream used without Redis (the embedded default) or when Redis
fails. assistant.live forwards Redis publications and falls back on these."""

import asyncio
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from uuid import UUID

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection

from assistant import progress
from assistant.progress import Cursor, Event


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


_read_in_thread: Callable[[UUID, Cursor], Awaitable[tuple[list[Event], bool]]] = sync_to_async(_read_and_release)
_read_slots: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]" = weakref.WeakKeyDictionary()


def read_slot() -> asyncio.Semaphore:
    """At most STREAM_DB_READS of a web process's streams read the database at
    once. Each read runs in its request's own thread, on a connection of its
    own: when a turn followed by 300 streams ended, the 300 reads of its end
    opened PostgreSQL connections all at once, and the reads refused past
    max_connections cut their streams before `turn_ended` (issue 21)."""
    loop = asyncio.get_running_loop()
    slots = _read_slots.get(loop)
    if slots is None:
        slots = _read_slots[loop] = asyncio.Semaphore(settings.STREAM_DB_READS)
    return slots


async def catch_up(turn_id: UUID, cursor: Cursor) -> tuple[list[Event], bool]:
    """The turn's events from `cursor` in the database (one read, in turn with
    the process's other streams)."""
    async with read_slot():
        return await _read_in_thread(turn_id, cursor)


class _PollPace:
    """When a polled stream ends (STREAM_MAX_SECONDS), when it owes the
    client a heartbeat (nothing sent for STREAM_HEARTBEAT_SECONDS), and how long
    it sleeps between reads: FIRST_POLL_SECONDS at first, doubled after each
    read up to STREAM_POLL_SECONDS, so a reply that starts at once is seen at
    once (the first word, issue 21) and a long wait costs the usual pace."""

    FIRST_POLL_SECONDS = 0.02

    def __init__(self):
        self.last_sent = time.monotonic()
        self.deadline = self.last_sent + settings.STREAM_MAX_SECONDS
        self.pause = min(self.FIRST_POLL_SECONDS, settings.STREAM_POLL_SECONDS)

    def next_pause(self) -> float:
        pause, self.pause = self.pause, min(self.pause * 2, settings.STREAM_POLL_SECONDS)
        return pause

    def open(self) -> bool:
        return time.monotonic() < self.deadline

    def heartbeat_due(self, sent: bool) -> bool:
        now = time.monotonic()
        if sent or now - self.last_sent >= settings.STREAM_HEARTBEAT_SECONDS:
            self.last_sent = now
            return not sent
        return False


async def poll_turn(turn_id: UUID, cursor: Cursor, *, sleep=asyncio.sleep) -> AsyncIterator[Event | None]:
    """Without Redis (the embedded default): read the database a few times a second."""
    pace = _PollPace()
    while pace.open():
        events, ended = await catch_up(turn_id, cursor)
        for event in events:
            yield event
        if ended:
            return
        if pace.heartbeat_due(sent=bool(events)):
            yield None
        await sleep(pace.next_pause())


def poll_turn_blocking(turn_id: UUID, cursor: Cursor, *, sleep=time.sleep) -> Iterator[Event | None]:
    """Under WSGI (`make run`'s dev server, the test client) a stream holds its
    thread anyway: it polls the database from it, as `poll_turn` does."""
    pace = _PollPace()
    while pace.open():
        events, ended = progress.turn_events(turn_id, cursor)
        yield from events
        if ended:
            return
        if pace.heartbeat_due(sent=bool(events)):
            yield None
        sleep(pace.next_pause())



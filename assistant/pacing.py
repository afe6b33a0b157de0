"""A model stream the loop can wait on with a timeout.

An SDK's stream blocks in a socket read while the model pauses (as models do
while composing a long tool input), so a loop that only acts when an event
arrives can't write the text it already holds. `paced` reads the stream in a
helper thread and hands its events over through a queue; the loop waits at
most as long as it asked and gets `PAUSE` when nothing came, so it can write
the pending text on time.

The helper thread does network I/O only, never the database: all writes stay
on the loop's thread (one connection, the exact query counts). Before each
wait the loop's thread gives its connection back to the pool
(`release_connection`): a worker's hundreds of turns, waiting on their models,
hold no database connection; a write takes one for its moment.
"""

import queue
import threading
from collections.abc import Callable, Iterator
from typing import Final

from django.db import connection

from assistant_engine.providers.clients.base import StreamEvent


class _Pause:
    def __repr__(self) -> str:
        return "PAUSE"


PAUSE: Final = _Pause()  # nothing arrived within the wait asked for
_END = object()


class _Failed:
    def __init__(self, error: BaseException):
        self.error = error


def release_connection() -> None:
    """This thread's database connection back to its pool (PostgreSQL's, see
    config.settings), unless a transaction holds it. Without a pool (SQLite)
    the connection is kept: closing it would only cost a reconnect."""
    if getattr(connection, "pool", None) is not None and not connection.in_atomic_block:
        connection.close()


def paced(
    stream: Callable[[], Iterator[StreamEvent]], wait_seconds: Callable[[], float | None],
    idle: Callable[[], None] = release_connection,
) -> Iterator[StreamEvent | _Pause]:
    """The events of `stream()`, and PAUSE whenever `wait_seconds()` (None:
    wait for the next event) passed without one. `idle()` runs before each
    wait that has nothing in hand. An exception of the stream is raised here,
    on the caller's thread. Closing this generator tells the helper thread to
    stop at its next event (a read it is blocked in ends with the SDK's own
    timeout)."""
    # SimpleQueue: a get with a timeout is one C call, not a Condition and a
    # new lock per wait (a worker holds hundreds of these, one wait per event).
    events: queue.SimpleQueue = queue.SimpleQueue()
    stop = threading.Event()
    reader = threading.Thread(target=_read, args=(stream, events, stop), name="model-stream", daemon=True)
    reader.start()
    try:
        while True:
            if events.empty():
                idle()
            try:
                item = events.get(timeout=wait_seconds())
            except queue.Empty:
                yield PAUSE
                continue
            if item is _END:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield item
    finally:
        stop.set()


def _read(stream: Callable[[], Iterator[StreamEvent]], events: queue.SimpleQueue, stop: threading.Event) -> None:
    iterator = None
    try:
        iterator = stream()
        for event in iterator:
            if stop.is_set():
                break
            events.put(event)
        events.put(_END)
    except BaseException as error:  # handed to the loop's thread, which decides
        events.put(_Failed(error))
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:
            close()

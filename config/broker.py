"""The embedded broker (a folder, no server: `make run`), with each message
written whole before a worker can see it.

kombu's filesystem transport creates a message file under its final name and
then writes into it; a worker listing the folder at that moment moves and reads
an empty file, fails to decode it and stops ("Unrecoverable error:
JSONDecodeError"), and the message is lost. Seen in CI under load. Here the
message is written under a name no worker takes (the transport only takes
names ending in `.<queue>.msg`) and renamed into place, which is atomic on one
filesystem.

A waiting worker is woken when a message arrives (Linux inotify on the queue
folder), so a turn starts at once instead of at the next poll (kombu polls a
folder every second: most of the first word's delay, issue 21). The folder
stays the truth: the worker still lists it on every wake and at least every
`polling_interval` (a wake that never comes, on a filesystem without inotify,
delays a message, never loses it). Without inotify it polls every
FALLBACK_POLL_SECONDS.
"""

import ctypes
import os
import select
import uuid
from queue import Empty
from time import monotonic, sleep

from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

# Never taken by a worker: `_get` compares what follows the first dot with `<queue>.msg`.
PARTIAL_SUFFIX = ".partial"


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        """Put `payload` onto `queue`, visible only once complete."""
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = final + PARTIAL_SUFFIX
        try:
            with open(partial, "wb") as file:
                file.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise filesystem.ChannelError(f"Cannot add file {final!r} to directory") from exc


FALLBACK_POLL_SECONDS = 0.05
_IN_MOVED_TO = 0x00000080  # a name renamed into the folder: how `_put` makes a message visible


class FolderWatch:
    """An inotify descriptor that becomes readable when a file is renamed into `folder`."""

    def __init__(self, folder: str):
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        if libc.inotify_add_watch(fd, os.fsencode(folder), _IN_MOVED_TO) < 0:
            error = ctypes.get_errno()
            os.close(fd)
            raise OSError(error, "inotify_add_watch", folder)
        self.fd = fd

    @classmethod
    def open(cls, folder: str) -> "FolderWatch | None":
        try:
            return cls(folder)
        except (OSError, AttributeError):  # not Linux (no inotify in libc), or out of watches
            return None

    def wait(self, seconds: float) -> None:
        """Until something arrived since the last wait, or `seconds` passed."""
        if select.select([self.fd], [], [], seconds)[0]:
            try:
                while os.read(self.fd, 65536):
                    pass
            except BlockingIOError:
                pass  # all read: the next wait sleeps until the next arrival

    def close(self) -> None:
        os.close(self.fd)


class Transport(filesystem.Transport):
    Channel = Channel
    _watch: FolderWatch | None = None
    _watch_pid = 0

    def drain_events(self, connection, timeout=None):
        """kombu's loop (try every queue, else wait, until `timeout`), with the
        wait woken by an arrival. The watch exists before the folder is listed,
        so a message renamed in between still ends the wait at once."""
        start = monotonic()
        watch = self._folder_watch()
        while True:
            try:
                self.cycle.get(self._deliver, timeout=timeout)
                return
            except Empty:
                waited = monotonic() - start
                if timeout is not None and waited >= timeout:
                    raise TimeoutError() from None
            pause = self.polling_interval if watch is not None else FALLBACK_POLL_SECONDS
            if timeout is not None:
                pause = min(pause, timeout - waited)
            if watch is not None:
                watch.wait(pause)
            else:
                sleep(pause)

    def _folder_watch(self) -> FolderWatch | None:
        if self._watch_pid != os.getpid():  # made in the process that consumes (never inherited by a fork)
            folder = self.client.transport_options.get("data_folder_in", "data_in")
            self._watch, self._watch_pid = FolderWatch.open(folder), os.getpid()
        return self._watch

    def close_connection(self, connection):
        if self._watch is not None and self._watch_pid == os.getpid():
            self._watch.close()
        self._watch, self._watch_pid = None, 0
        super().close_connection(connection)

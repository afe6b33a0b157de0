"""A measure taken again and again on a thread of its own while something
runs (tests and benches keep the highest value seen)."""

import threading


class Sampling:
    """`with` a subclass: its `sample()` runs every `interval` seconds until the
    block ends, then its `done()` once, on the same thread."""

    interval = 0.1

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> None:
        raise NotImplementedError

    def done(self) -> None:
        """Release what the samples opened on the thread."""

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self.sample()
                self._stop.wait(self.interval)
        finally:
            self.done()

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

"""Run the same action in many threads at once, to prove a lock holds."""

import threading

from django.db import connection


def race(count: int, action) -> list:
    """Run action(i) in `count` threads released together by a barrier.

    Each thread has its own database connection (Django's are per thread) and
    closes it at the end. Returns each call's result, or the exception it raised.
    """
    barrier = threading.Barrier(count)
    outcomes: list = [None] * count

    def run(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            outcomes[index] = action(index)
        except Exception as exc:  # the outcome is inspected by the test
            outcomes[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a racer never finished"
    return outcomes

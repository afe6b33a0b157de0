"""The first word at once (issue 21): no wait on the path from a message to its
first text event but the work itself. The folder broker's wake-up is tested in
tests/config/test_broker.py; the measured latency is `make bench-first-word`."""

import pytest
from asgiref.sync import async_to_sync, sync_to_async

from assistant import live
from assistant.models import Turn
from assistant.progress import Cursor
from assistant.turn.stream import FIRST_TEXT_SECONDS, FLUSH_SECONDS, StreamedText
from tests.assistant.test_chat_api import post_chat


class ManualClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_models_first_text_is_written_soon_after_the_step_starts_not_a_flush_later():
    clock, writes = ManualClock(), []
    streamed = StreamedText(writes.append, clock=clock)
    clock.now += 0.01
    streamed.add("Hel")  # the model answered at once
    assert writes == [] and streamed.seconds_until_due() == pytest.approx(FIRST_TEXT_SECONDS - 0.01)
    clock.now += FIRST_TEXT_SECONDS
    streamed.add("lo")
    assert writes == ["Hello"]
    clock.now += 0.01
    streamed.add(", world")  # from then on, at most one write per FLUSH_SECONDS
    assert writes == ["Hello"] and streamed.seconds_until_due() == pytest.approx(FLUSH_SECONDS - 0.01)


def test_a_step_that_ends_within_the_first_delay_writes_nothing_before_its_end():
    clock, writes = ManualClock(), []
    streamed = StreamedText(writes.append, clock=clock)
    streamed.add("Here.")  # the whole reply at once: the step's end writes it (one INSERT)
    assert writes == []


@pytest.mark.django_db
def test_a_polled_stream_reads_at_once_then_slows_to_its_pace(owner, settings):
    """Both doors (the async one and `make run`'s blocking one): 20 ms, doubled
    after each read, up to STREAM_POLL_SECONDS."""
    settings.REDIS_URL, settings.STREAM_POLL_SECONDS = "", 0.2
    turn = Turn.objects.get(id=post_chat(owner, message="Hi").json()["turnId"])
    expected = [0.02, 0.04, 0.08, 0.16, 0.2, 0.2]

    def ending_after(pauses: list[float]):
        def sleep(seconds: float) -> None:
            pauses.append(seconds)
            if len(pauses) == len(expected):
                Turn.objects.filter(id=turn.id).update(status="done")
        return sleep

    blocking: list[float] = []
    events = list(live.poll_turn_blocking(turn.id, Cursor(), sleep=ending_after(blocking)))
    assert blocking == pytest.approx(expected) and events[-1].name == "turn_ended"

    Turn.objects.filter(id=turn.id).update(status="running")
    polled: list[float] = []
    record = ending_after(polled)

    async def sleep(seconds: float) -> None:
        await sync_to_async(record)(seconds)

    async def collect():
        return [event async for event in live.poll_turn(turn.id, Cursor(), sleep=sleep) if event]

    assert async_to_sync(collect)()[-1].name == "turn_ended" and polled == pytest.approx(expected)

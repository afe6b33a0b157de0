"""Turns as threads (Celery's threads pool, as scripts/serve.sh runs it): many
turns at once in one real worker process, waiting on a slow fake Anthropic
server (the official SDK runs for real) without holding database connections;
and a worker SIGKILLed mid-turn that stalls no other worker."""

import os
import signal
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from assistant import maintenance
from assistant.models import Turn
from credits.models import CreditAccount, LedgerEntry
from tests import workers
from tests.assistant.test_text_during_pause import pausing_reply, start_turn, wire, worker_env  # noqa: F401
from tests.fakes.wire_servers import anthropic_events, anthropic_sse
from tests.sampling import Sampling
from tests.workers import celery_worker, wait_until

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

TURNS = 50
POOL_SIZE = 5
WORKER_APP = "threads-worker"


class Sampler(Sampling):
    """How many turns run and how many connections the worker holds, every
    0.1 s on its own connection; keeps the highest of each."""

    def __init__(self) -> None:
        super().__init__()
        self.most_running = self.most_connections = 0

    def sample(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", [WORKER_APP])
            self.most_connections = max(self.most_connections, cursor.fetchone()[0])
        self.most_running = max(self.most_running, Turn.objects.filter(status="running").count())

    def done(self) -> None:
        connection.close()


@pytest.mark.postgres_only
@pytest.mark.skipif(connection.vendor != "postgresql", reason="counts PostgreSQL's connections")
def test_fifty_turns_wait_on_the_model_at_once_in_one_process_with_few_connections(owner, wire):  # noqa: F811
    wire.reply(*(pausing_reply(pause=12) for _ in range(TURNS)))
    tagged_url = f"{workers.test_database_url()}?application_name={WORKER_APP}"
    environment = worker_env(wire) | {"DATABASE_URL": tagged_url, "DATABASE_POOL_SIZE": str(POOL_SIZE)}
    with celery_worker(name="threads", concurrency=TURNS, **environment), Sampler() as sampler:
        turn_ids = [start_turn(owner)[1] for _ in range(TURNS)]
        wait_until(lambda: Turn.objects.filter(id__in=turn_ids, status__in=("done", "failed")).count() == TURNS,
                   timeout=180, interval=0.5)
    turns = list(Turn.objects.filter(id__in=turn_ids))
    assert [(t.status, t.failure_kind) for t in turns] == [("done", "")] * TURNS
    # All of them waited on the model together, in the one process, and its
    # threads shared at most its pool's connections (one each before the pool).
    assert sampler.most_running == TURNS
    assert 1 <= sampler.most_connections <= POOL_SIZE, sampler.most_connections
    # Every turn's credits settled once; nothing stays held.
    for turn in turns:
        closing = LedgerEntry.objects.filter(turn_id=turn.id, kind__in=LedgerEntry.CLOSING_KINDS)
        assert list(closing.values_list("kind", flat=True)) == ["settle"]
        assert turn.cost_micros > 0
    account = CreditAccount.objects.get(organization=owner.organization)
    assert account.reserved_micros == 0
    assert account.used_micros == sum(turn.cost_micros for turn in turns)


def quick_reply():
    return anthropic_sse(anthropic_events(text=("Done.",)))


def ended(turn_id) -> bool:
    return Turn.objects.get(id=turn_id).status in ("done", "failed")


def test_a_worker_killed_mid_turn_stalls_no_other_worker(owner, wire, settings):  # noqa: F811
    # The first turn's model pauses (long enough to kill its worker in the
    # middle); the next ones answer at once.
    wire.reply(pausing_reply(pause=60), quick_reply(), quick_reply())
    env = worker_env(wire)
    # One thread: the doomed worker takes no second turn while its first runs.
    with celery_worker(name="doomed", concurrency=1, **env) as doomed:
        _, killed = start_turn(owner)
        wait_until(wire.pausing.is_set, timeout=60)
        with celery_worker(name="survivor", **env):
            _, during = start_turn(owner)  # taken by the survivor
            wait_until(lambda: ended(during), timeout=60)
            os.killpg(doomed.pid, signal.SIGKILL)
            doomed.wait(timeout=10)
            _, after = start_turn(owner)
            wait_until(lambda: ended(after), timeout=60)
    assert Turn.objects.get(id=during).status == Turn.objects.get(id=after).status == "done"
    assert Turn.objects.get(id=killed).status == "running"  # its worker died with it

    # The stuck-turn job recovers it: failed, its hold kept as its cost, the thread free.
    settings.ASSISTANT_TURN_SECONDS, settings.ASSISTANT_STUCK_GRACE_SECONDS = 1, 0
    assert maintenance.fail_stuck_turns(now=timezone.now() + timedelta(seconds=2)) == 1
    turn = Turn.objects.select_related("thread").get(id=killed)
    assert (turn.status, turn.failure_kind, turn.thread.status) == ("failed", "timeout", "idle")
    assert list(LedgerEntry.objects.filter(turn_id=killed).values_list("kind", flat=True)) == ["reserve", "stuck"]

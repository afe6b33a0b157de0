"""Maintenance tests: turns in every state, and a real redis-server started by
the test run (never a fake), stopped at its end."""

import shutil
import socket
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

import kombu.pools
import pytest
import redis
from django.conf import settings
from django.utils import timezone

from assistant.chat import chat_submit
from assistant.loop import claim_turn
from assistant.models import Turn
from assistant.turn.settle import append_message
from config.celery import app as celery_app
from conversations.models import Message
from tests.workers import stop_process_group, wait_until


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- Turns ------------------------------------------------------------------------


def queued_turn(person, message="Hello", conversation_id=None) -> Turn:
    """A turn as POST /api/chat leaves it (in a `db` test nothing is published:
    on_commit callbacks don't run inside the test's transaction)."""
    submitted = chat_submit(person.member, message=message, conversation_id=conversation_id)
    return Turn.objects.get(id=submitted.turn_id)


def running_turn(person, *, partial="Half a rep", seconds_ago: float | None = None, message="Hello") -> Turn:
    """A turn a worker claimed and streamed `partial` into, then lost."""
    turn = queued_turn(person, message=message)
    assert claim_turn(turn.id)
    append_message(turn.thread_id, turn.id, role=Message.Role.ASSISTANT, content=partial,
                   status=Message.Status.STREAMING)
    if seconds_ago is None:
        seconds_ago = settings.ASSISTANT_TURN_SECONDS + settings.ASSISTANT_STUCK_GRACE_SECONDS + 5
    Turn.objects.filter(id=turn.id).update(started_at=timezone.now() - timedelta(seconds=seconds_ago))
    turn.refresh_from_db()
    return turn


# --- Redis --------------------------------------------------------------------------


@dataclass(frozen=True)
class RedisServer:
    url: str
    port: int
    client: redis.Redis


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    """Debian's redis-server on 127.0.0.1 and a free port, nothing persisted."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is missing: `make test` installs it (apt-get install redis-server).")
    folder = tmp_path_factory.mktemp("redis")
    port = free_port()
    with open(folder / "redis.log", "wb") as log:
        process = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(folder)],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url)

    def answers() -> bool:
        try:
            return client.ping()
        except redis.ConnectionError:
            assert process.poll() is None, (folder / "redis.log").read_text()
            return False

    try:
        wait_until(answers, timeout=15, interval=0.05)
        yield RedisServer(url=url, port=port, client=client)
    finally:
        client.close()
        stop_process_group(process)


REDIS_TRANSPORT_OPTIONS = {"visibility_timeout": 3600, "socket_connect_timeout": 3, "socket_timeout": 10}


@contextmanager
def publishing_to(url: str):
    """Point this process's Celery app (what POST /api/chat publishes with) at
    another broker, and back at the end."""
    conf = celery_app.conf
    saved = conf.broker_url, conf.broker_transport_options
    _drop_connections()
    conf.broker_url, conf.broker_transport_options = url, REDIS_TRANSPORT_OPTIONS
    try:
        yield
    finally:
        _drop_connections()
        conf.broker_url, conf.broker_transport_options = saved


def _drop_connections() -> None:
    # The app caches its connection and producer pools on first use (Celery
    # resets the same two attributes after a fork); kombu keeps the pools.
    kombu.pools.reset()
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


@pytest.fixture
def redis_broker(redis_server):
    """An empty Redis that this process publishes to; workers get its URL."""
    redis_server.client.flushall()
    with publishing_to(redis_server.url):
        yield redis_server

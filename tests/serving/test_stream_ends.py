"""Every stream gets its end (issue 21): each event stream of a turn that ends
carries `turn_ended` before it closes, with 300 streams on one turn and with
300 turns ending at once, through the production web (scripts/serve.sh web, 2
processes, Redis, PostgreSQL).

The cause found: at a turn's end every stream reads the database once (the
end's catch-up), each in the thread of its own request (Django's ASGI handler
gives each request its own), so 300 streams opened as many PostgreSQL
connections as the reads overlapped (up to 77 at once seen here, 300 streams
opening and ending); past what the server allows (PostgreSQL's default
max_connections is 100) a read failed and its stream was cut after its last
text. Before the fix (STREAM_DB_READS unbounded) 96 of the 300 streams on one
turn ended without `turn_ended` here. A web process now reads for its streams a
few at a time (STREAM_DB_READS). The web here connects as a role allowed
WEB_CONNECTIONS connections, a deployment's PostgreSQL smaller than its crowd."""

import asyncio
import os
import subprocess

import pytest
from django.db import connection

from assistant.models import Turn
from assistant.turn.outcome import Outcome
from assistant.turn.settle import finish_turn
from tests import workers
from tests.maintenance.conftest import free_port, running_turn
from tests.serving.test_production_stack import ON_POSTGRES, _answers
from tests.workers import PROJECT, stop_process_group, wait_until

pytestmark = [
    pytest.mark.postgres_only, pytest.mark.redis,
    pytest.mark.skipif(not ON_POSTGRES, reason="the production stack runs on PostgreSQL (make test's second run)"),
    pytest.mark.django_db(transaction=True),
]

STREAMS = 300
WEB_CONNECTIONS = 10
WAVE = 4  # streams opened at once: few enough for WEB_CONNECTIONS before the fix too, so the end is what is tested


@pytest.fixture(scope="module")
def limited_database_url(django_db_setup, django_db_blocker):
    """The test database through a role that may hold WEB_CONNECTIONS connections
    (a member of the owner of the tables, so it reads and writes them)."""
    role, owner = "stream_web", connection.settings_dict.get("USER") or "postgres"
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(f"DROP ROLE IF EXISTS {role}")
        cursor.execute(f"CREATE ROLE {role} LOGIN CONNECTION LIMIT {WEB_CONNECTIONS} IN ROLE {owner}")
    yield workers.test_database_url().replace(f"://{owner}@", f"://{role}@", 1)
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(f"DROP ROLE IF EXISTS {role}")


@pytest.fixture(scope="module")
def production_web(limited_database_url, redis_server, tmp_path_factory):
    """scripts/serve.sh web with 2 processes (no worker: the test ends the turns as a worker would)."""
    tmp_path = tmp_path_factory.mktemp("web")
    port, log = free_port(), tmp_path / "assistant_engine.web.log"
    env = {
        **os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "0", "SECRET_KEY": "stack-test-secret",
        "ASSISTANT_KEYS_SECRET": "stack-test-keys-secret",
        "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend",
        "DATABASE_URL": limited_database_url, "REDIS_URL": redis_server.url, "ASSISTANT_MODEL": "offline",
        "ALLOWED_HOSTS": "127.0.0.1", "HOST": "127.0.0.1", "PORT": str(port), "WEB_CONCURRENCY": "2",
        "RUN_DIR": str(tmp_path / "run"), "STATIC_ROOT": str(tmp_path / "static"), "PYTHONUNBUFFERED": "1",
        "WEB_OPTIONS": "--access-logfile /dev/null",
    }
    with open(log, "wb") as output:
        process = subprocess.Popen([str(PROJECT / "scripts/serve.sh"), "web"], cwd=PROJECT, env=env, stdout=output,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_until(lambda: _answers(port), timeout=60, interval=0.2)
        yield port, log
    finally:
        stop_process_group(process)


async def _open(port: int, token: str, turn_id) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET /api/turns/{turn_id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                 f"Authorization: Bearer {token}\r\n\r\n".encode())
    await writer.drain()
    return reader, writer


async def _until(reader: asyncio.StreamReader, marker: bytes) -> bytes:
    received = b""
    while marker not in received:
        chunk = await reader.read(65536)
        if not chunk:
            break
        received += chunk
    return received


def follow_then_end(port: int, token: str, turn_ids: list, end) -> list[bytes]:
    """One stream per entry of `turn_ids`, each read until its first text (all
    caught up and waiting), then `end()` in a thread, then each read to its close."""

    async def run() -> list[bytes]:
        streams = []
        seen = []
        for start in range(0, len(turn_ids), WAVE):  # opened in waves, as clients arrive
            wave = await asyncio.gather(*(_open(port, token, t) for t in turn_ids[start:start + WAVE]))
            async with asyncio.timeout(60):
                seen += await asyncio.gather(*(_until(reader, b"Thinking") for reader, _ in wave))
            streams += wave
        assert all(b"Thinking" in head and b" 200 " in head.split(b"\r\n", 1)[0] for head in seen)
        await asyncio.to_thread(end)
        async with asyncio.timeout(120):
            rest = await asyncio.gather(*(reader.read() for reader, _ in streams))
        for _, writer in streams:
            writer.close()
        return [head + tail for head, tail in zip(seen, rest, strict=True)]

    return asyncio.run(run())


def end_turns(turn_ids: list) -> None:
    try:
        for turn_id in turn_ids:
            assert finish_turn(turn_id, Outcome(Turn.Status.DONE), usage=None)
    finally:
        connection.close()  # this thread's own connection


def test_300_streams_on_one_turn_each_get_the_end(owner, production_web, live_redis):
    port, log = production_web
    turn = running_turn(owner, partial="Thinking", seconds_ago=1)
    bodies = follow_then_end(port, owner.token, [turn.id] * STREAMS, lambda: end_turns([turn.id]))
    missing = [body[-300:] for body in bodies if b"event: turn_ended" not in body]
    assert not missing, f"{len(missing)} of {STREAMS} streams closed without turn_ended, e.g. {missing[0]!r}"
    assert "Traceback" not in log.read_text(errors="replace")


def test_300_turns_ending_at_once_each_stream_gets_its_end(owner, production_web, live_redis, settings):
    port, log = production_web
    settings.CREDITS_RESERVATION = 1
    turns = [running_turn(owner, partial="Thinking", seconds_ago=1).id for _ in range(STREAMS)]
    bodies = follow_then_end(port, owner.token, turns, lambda: end_turns(turns))
    missing = [body[-300:] for body in bodies if b"event: turn_ended" not in body]
    assert not missing, f"{len(missing)} of {STREAMS} streams closed without turn_ended, e.g. {missing[0]!r}"
    assert "Traceback" not in log.read_text(errors="replace")



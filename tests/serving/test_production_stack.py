"""The production stack itself, as `make serve` starts it (scripts/serve.sh all:
gunicorn + uvicorn workers, a Celery worker and beat, production settings) on
the PostgreSQL server of `make test` and a real Redis: a whole turn through it
with its stream, static files through WhiteNoise, and a closed tab that ends
its stream at once."""

import http.client
import json
import os
import socket
import subprocess
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from assistant import live
from conversations.models import Message
from tests import workers
from tests.maintenance.conftest import free_port, running_turn
from tests.workers import PROJECT, stop_process_group, wait_for_log, wait_until
from workspace.models import Note

ON_POSTGRES = settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"
POOL_SIZE = 2  # connections per process of the stack (web, worker)

pytestmark = [
    pytest.mark.postgres_only, pytest.mark.redis, pytest.mark.worker,
    pytest.mark.skipif(not ON_POSTGRES, reason="the production stack runs on PostgreSQL (make test's second run)"),
    pytest.mark.django_db(transaction=True),
]


class Stack:
    def __init__(self, port: int, log: Path):
        self.port, self.log = port, log

    def request(self, method: str, path: str, *, token: str = "", body: dict | None = None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if body is not None:
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        return connection.getresponse()


@pytest.fixture(scope="module")
def production_stack(django_db_setup, redis_server, tmp_path_factory):
    """Started once for this module's tests (each test's rows are its own)."""
    redis_server.client.flushall()
    tmp_path = tmp_path_factory.mktemp("stack")
    port, log = free_port(), tmp_path / "serve.log"
    env = {
        **os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "0", "SECRET_KEY": "stack-test-secret",
        "ASSISTANT_KEYS_SECRET": "stack-test-keys-secret",
        "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend",
        "DATABASE_URL": workers.test_database_url(), "REDIS_URL": redis_server.url, "ASSISTANT_MODEL": "offline",
        "ALLOWED_HOSTS": "127.0.0.1", "HOST": "127.0.0.1", "PORT": str(port), "WEB_CONCURRENCY": "1",
        "WORKER_CONCURRENCY": "1", "RUN_DIR": str(tmp_path / "run"), "STATIC_ROOT": str(tmp_path / "static"),
        "OFFLINE_MODEL_CHUNK_DELAY_MS": "40", "PYTHONUNBUFFERED": "1",
        # Small pools: a stream that kept its connection would exhaust its process's.
        "DATABASE_POOL_SIZE": str(POOL_SIZE),
    }
    env.pop("CELERY_BROKER_URL", None)
    with open(log, "wb") as output:
        process = subprocess.Popen([str(PROJECT / "scripts/serve.sh"), "all"], cwd=PROJECT, env=env, stdout=output,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for_log(log, "ready.", timeout=90)  # the Celery worker
        wait_until(lambda: _answers(port), timeout=60, interval=0.2)
        yield Stack(port, log)
    finally:
        stop_process_group(process)


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def read_events(response) -> list[tuple[str, dict]]:
    """SSE frames as they arrive, until turn_ended."""
    events, frame = [], {}
    while True:
        line = response.readline().decode().rstrip("\r\n")
        if line == "":
            if "event" in frame:
                events.append((frame["event"], json.loads(frame["data"])))
                if frame["event"] == "turn_ended":
                    return events
            frame = {}
        elif not line.startswith(":"):
            key, _, value = line.partition(": ")
            frame[key] = value


def test_a_whole_turn_through_the_production_stack_with_its_stream(owner, production_stack):
    Note.objects.create(organization=owner.organization, owner=owner.user, title="Zurich trip",
                        body="Train at 9 to the lake")
    token = owner.token

    static = production_stack.request("GET", "/static/assistant/turn-follow.js")
    assert static.status == 200 and b"EventSource" in static.read()  # WhiteNoise, DEBUG off

    posted = production_stack.request("POST", "/api/chat", token=token, body={"message": "Search my notes for Zurich"})
    assert posted.status == 202, posted.read()
    turn_id = json.loads(posted.read())["turnId"]
    stream = production_stack.request("GET", f"/api/turns/{turn_id}/events", token=token)
    assert stream.status == 200 and stream.getheader("Content-Type") == "text/event-stream"
    events = read_events(stream)

    names = [name for name, _ in events]
    assert names[0] == "message_started" and names[-1] == "turn_ended"
    assert {"text", "tool_call_started", "tool_call_finished"} <= set(names)
    assert events[-1][1]["status"] == "done" and events[-1][1]["steps"] == 2
    assert [data["name"] for name, data in events if name == "tool_call_started"] == ["search_notes"]
    streamed = "".join(data["delta"] for name, data in events if name == "text")
    written = "".join(Message.objects.filter(turn_id=turn_id, role="assistant").order_by("seq")
                      .values_list("content", flat=True))
    assert streamed == written and "Zurich" in written
    # Text the worker published on Redis and the web forwarded (not read back from the database).
    assert any("at" in data for name, data in events if name == "text")


def test_a_closed_tab_ends_its_stream_and_its_subscription_at_once(owner, production_stack, redis_server):
    token = owner.token
    turn = running_turn(owner, partial="Thinking", seconds_ago=1)  # waits on its model: no worker has it
    tab = socket.create_connection(("127.0.0.1", production_stack.port), timeout=10)
    tab.sendall(f"GET /api/turns/{turn.id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Authorization: Bearer {token}\r\n\r\n".encode())
    received = b""
    while b"Thinking" not in received:
        received += tab.recv(4096)
    assert b" 200 " in received.split(b"\r\n", 1)[0]
    channel = live.channel(turn.id)
    assert redis_server.client.pubsub_numsub(channel) == [(channel.encode(), 1)]

    tab.close()
    wait_until(lambda: redis_server.client.pubsub_numsub(channel) == [(channel.encode(), 0)], timeout=5,
               interval=0.02)
    assert "Traceback" not in production_stack.log.read_text(errors="replace")


def test_an_outsider_gets_404_on_the_production_stream(owner, outsider, production_stack):
    turn = running_turn(owner, seconds_ago=1)
    response = production_stack.request("GET", f"/api/turns/{turn.id}/events",
                                        token=outsider.token)
    assert response.status == 404 and json.loads(response.read())["code"] == "not_found"
    missing = production_stack.request("GET", f"/api/turns/{uuid.uuid4()}/events",
                                       token=owner.token)
    assert missing.status == 404
    assert production_stack.request("GET", f"/api/turns/{turn.id}/events").status == 401


def test_open_streams_hold_no_database_connection_and_share_one_redis_connection(owner, production_stack, redis_server):
    token = owner.token
    turn = running_turn(owner, partial="Thinking", seconds_ago=1)

    def backends() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                           "AND pid <> pg_backend_pid()")
            return cursor.fetchone()[0]

    before = backends()
    tabs = [socket.create_connection(("127.0.0.1", production_stack.port), timeout=10) for _ in range(20)]
    for tab in tabs:
        tab.sendall(f"GET /api/turns/{turn.id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    f"Authorization: Bearer {token}\r\n\r\n".encode())
    for tab in tabs:  # each stream has read the database (its catch-up) and now waits
        received = b""
        while b"Thinking" not in received:
            received += tab.recv(4096)
    channel = live.channel(turn.id)
    # One subscription for the 20 (the web process's hub), one Redis connection.
    assert redis_server.client.pubsub_numsub(channel) == [(channel.encode(), 1)]
    assert len([c for c in redis_server.client.client_list() if int(c["sub"]) > 0]) == 1
    during = backends()
    for tab in tabs:
        tab.close()
    # The pools of the web and the worker at most (they keep returned connections
    # open); 20 streams holding one each would be 20.
    assert during <= before + 2 * POOL_SIZE

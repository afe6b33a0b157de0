"""The load test's users (run by bench/loadtest.sh, never by `make test`).

ChatUser: sends a message (a 2-step turn with a tool call on the offline model
at 40 ms a chunk) and follows its stream to the end; records the delay from
the worker publishing text to this client receiving it ("text delay").
StreamHolder: opens one stream on a turn that waits on its model and keeps it
open until the turn ends (bench/loadtest.sh ends those turns).
"""

import itertools
import json
import os
import time

from locust import HttpUser, constant, events, task

TOKEN = os.environ.get("LOADTEST_TOKEN", "")
HELD_TURNS = [t for t in os.environ.get("LOADTEST_HELD_TURNS", "").split(",") if t]
_next_held = itertools.count()


def sse_events(response):
    """(name, data) as each SSE frame arrives. Frames are split by hand:
    requests' iter_lines can cut a CRLF in two and invent an empty line."""
    buffer = ""
    for chunk in response.iter_content(chunk_size=None, decode_unicode=True):
        buffer = (buffer + chunk).replace("\r\n", "\n")
        while "\n\n" in buffer:
            frame, buffer = buffer.split("\n\n", 1)
            fields = dict(line.split(": ", 1) for line in frame.split("\n") if line and not line.startswith(":"))
            if "event" in fields:
                yield fields["event"], json.loads(fields["data"])


def record(name: str, started: float, *, error: Exception | None = None, milliseconds: float | None = None):
    events.request.fire(request_type="SSE", name=name, response_length=0, exception=error, context={},
                        response_time=milliseconds if milliseconds is not None else (time.time() - started) * 1000)


class ChatUser(HttpUser):
    wait_time = constant(0.2)

    def on_start(self):
        self.client.headers["Authorization"] = f"Bearer {TOKEN}"

    @task
    def chat(self):
        with self.client.post("/api/chat", json={"message": "Search my notes for budget"}, name="POST /api/chat",
                              catch_response=True) as posted:
            if posted.status_code != 202:
                posted.failure(f"{posted.status_code}: {posted.text[:200]}")
                return
            turn_id = posted.json()["turnId"]
        started = time.time()
        with self.client.get(f"/api/turns/{turn_id}/events", stream=True, name="GET events (whole turn)",
                             catch_response=True) as stream:
            ended = None
            for name, data in sse_events(stream):
                if name == "text" and "at" in data:
                    record("text delay (worker write → client)", started, milliseconds=time.time() * 1000 - data["at"])
                if name == "turn_ended":
                    ended = data
                    break
            if ended is None or ended["status"] != "done":
                stream.failure(f"turn did not end well: {ended}")
            else:
                stream.success()
        record("turn (POST answered → turn_ended received)", started)


class StreamHolder(HttpUser):
    wait_time = constant(3600)  # one stream per user, held until its turn ends

    def on_start(self):
        self.client.headers["Authorization"] = f"Bearer {TOKEN}"

    @task
    def hold(self):
        turn_id = HELD_TURNS[next(_next_held) % len(HELD_TURNS)]
        with self.client.get(f"/api/turns/{turn_id}/events", stream=True, name="GET events (held open)",
                             catch_response=True, timeout=600) as stream:
            names = [name for name, _ in sse_events(stream)]
            if names[-1:] == ["turn_ended"]:
                stream.success()
            else:
                stream.failure(f"the stream ended without turn_ended: {names[-3:]}")

"""The peer side of `make bench-compare`: django-ai-assistant 0.4.0 running the
same scripted turns as ours, in its own virtualenv (.run/peer-venv).

A line-oriented worker: it reads `SHAPE HISTORY STEPS COUNT` on stdin, runs
COUNT turns and answers one JSON line with each turn's milliseconds, queries
and full garbage collections. The model is scripted (no network), like ours:
a search_notes tool call over 50 notes, then an answer.
"""

import gc
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
WORKDIR = Path(tempfile.mkdtemp(prefix="peer-bench-"))

import django  # noqa: E402
from django.conf import settings  # noqa: E402

settings.configure(
    DEBUG=False,
    SECRET_KEY="bench-only",
    USE_TZ=True,
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(WORKDIR / "peer.sqlite3")}},
    INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "django_ai_assistant", "peer_notes"],
    DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
)
django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django_ai_assistant import AIAssistant, method_tool  # noqa: E402
from django_ai_assistant.helpers.django_messages import save_django_messages  # noqa: E402
from django_ai_assistant.helpers.use_cases import create_message  # noqa: E402
from django_ai_assistant.models import Thread  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from peer_notes.models import Note  # noqa: E402

ANSWER = "Here is what I found in your notes, summarized in a few words."


class ScriptedChatModel(FakeMessagesListChatModel):
    """A scripted model that accepts tools, as a real chat model does."""

    def bind_tools(self, tools, **kwargs):
        return self


def script(steps: int):
    calls = [
        AIMessage(content="Looking. ", tool_calls=[{"name": "search_notes", "args": {"query": "Zurich"},
                                                    "id": f"call_{i}"}])
        for i in range(steps - 1)
    ]
    return [*calls, AIMessage(content=ANSWER)]


class BenchAssistant(AIAssistant):
    id = "bench_assistant"  # noqa: A003
    name = "Bench assistant"
    instructions = "You are the assistant of a web product."
    model = "scripted"
    steps = 2

    def get_llm(self):
        return ScriptedChatModel(responses=script(self.steps))

    @method_tool
    def search_notes(self, query: str) -> str:
        """Search the person's own notes by words in their title or body."""
        notes = Note.objects.filter(owner=self._user, title__icontains=query).order_by("-updated_at")[:50]
        return json.dumps({"notes": [{"id": n.id, "title": n.title, "snippet": n.body[:160],
                                      "updated_at": n.updated_at.isoformat()} for n in notes]})


def setup():
    call_command("migrate", verbosity=0, run_syncdb=True)
    user = get_user_model().objects.create_user(username="bench", password="bench-password")
    Note.objects.bulk_create([Note(owner=user, title=f"Note {i} about Zurich", body="x" * 500) for i in range(50)])
    return user


def thread_of(user, history: int) -> Thread:
    thread = Thread.objects.create(name="Bench", created_by=user, assistant_id=BenchAssistant.id)
    past = [
        HumanMessage(content=f"Message {i} about a trip to Zurich and what to pack.") if i % 2 == 0
        else AIMessage(content=f"Message {i} about a trip to Zurich and what to pack.")
        for i in range(history)
    ]
    if past:
        save_django_messages(past, thread=thread)
    return thread


def run(user, history: int, steps: int, count: int) -> list[dict]:
    BenchAssistant.steps = steps
    results = []
    for _ in range(count):
        thread = thread_of(user, history)
        connection.queries_log.clear()  # a full log (9,000 queries) would count nothing
        full_before = gc.get_stats()[2]["collections"]
        with CaptureQueriesContext(connection) as captured:
            started, started_cpu = time.perf_counter(), time.process_time()
            create_message(BenchAssistant.id, thread, user, "Search my notes for Zurich")
            elapsed = (time.perf_counter() - started) * 1000
            cpu = (time.process_time() - started_cpu) * 1000
        # The same work as ours: the person's message, each tool call and result, the answer.
        assert thread.messages.count() == history + 2 * steps, "the peer did not run the scripted turn"
        results.append({"ms": elapsed, "cpu_ms": cpu, "queries": len(captured.captured_queries),
                        "full_gcs": gc.get_stats()[2]["collections"] - full_before})
    return results


def main() -> None:
    user = setup()
    print("ready", flush=True)
    for line in sys.stdin:
        history, steps, count = (int(part) for part in line.split())
        print(json.dumps(run(user, history, steps, count)), flush=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()

"""Benchmark of the turn loop's own cost (`make bench`; not part of the tests).

Turns run against an instant scripted model, so what is measured is the
framework: history building, streaming writes, tool dispatch, ToolCall rows,
settlement. Two shapes: 1 step (text only) and 5 steps (4 with a tool call).
Prints a Markdown table; with --write (`make bench WRITE=1`) appends it, with
the machine and the date, to bench/README.md, so a plain run leaves `git
status` clean.
"""

import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
WORKDIR = Path(tempfile.mkdtemp(prefix="assistant-bench-"))
os.environ.setdefault("DATABASE_URL", f"sqlite:///{WORKDIR / 'bench.sqlite3'}")
os.environ.update(SECRET_KEY="bench-only", DEBUG="0", RUN_DIR=str(WORKDIR), OFFLINE_MODEL_CHUNK_DELAY_MS="0",
                  LOG_LEVEL="WARNING")
# Production settings refuse to start without these (README, Configuration).
os.environ.setdefault("ASSISTANT_KEYS_SECRET", "bench-only")
os.environ.setdefault("EMAIL_BACKEND", "django.core.mail.backends.locmem.EmailBackend")
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from assistant.chat import chat_submit  # noqa: E402
from assistant.loop import run_turn  # noqa: E402
from assistant_engine.organizations.members import Member, member_from_membership  # noqa: E402
from assistant_engine.organizations.models import Membership, Organization  # noqa: E402
from conversations.models import Thread  # noqa: E402
from tests.fakes.scripted import ScriptedClient, call, say  # noqa: E402
from workspace.models import Note  # noqa: E402

TURNS = int(os.environ.get("BENCH_TURNS", "60"))


def setup() -> Member:
    call_command("migrate", verbosity=0)
    organization = Organization.objects.create(slug="bench", name="Bench", monthly_credits=10_000_000)
    user = get_user_model().objects.create_user(username="bench", password="bench-password")
    Membership.objects.create(organization=organization, user=user)
    for index in range(50):
        Note.objects.create(organization=organization, owner=user, title=f"Note {index} about Zurich", body="x" * 500)
    # As every door gives it: made by the guard from the membership row it read
    # (its terms included), so a submission reads no organization row again.
    return member_from_membership(Membership.objects.select_related("organization").get(user=user))


def script(steps: int):
    tool_steps = [call(("search_notes", {"query": "Zurich"}), text="Looking. ") for _ in range(steps - 1)]
    return [*tool_steps, say("Here is what I found in your notes, summarized in a few words.")]


def enqueue_turn_in_process() -> None:
    import assistant.chat

    assistant.chat.enqueue_turn = lambda turn_id: None  # the benchmark runs the turn itself


def measure(member: Member, steps: int) -> dict:
    durations, queries = [], []
    thread_id = None
    enqueue_turn_in_process()
    for _ in range(TURNS):
        submitted = chat_submit(member, message="Search my notes for Zurich", conversation_id=thread_id)
        thread_id = submitted.thread_id
        client = ScriptedClient(*script(steps))
        connection.queries_log.clear()  # a full log (9,000 queries) would count nothing
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            run_turn(submitted.turn_id, client=client)
            durations.append((time.perf_counter() - started) * 1000)
        queries.append(len(captured.captured_queries))
        if len(durations) % 20 == 0:  # keep the history bounded and comparable between shapes
            Thread.objects.filter(id=thread_id).delete()
            thread_id = None
    per_step = [d / steps for d in durations]
    return {
        "steps": steps,
        "turn_median": statistics.median(durations),
        "turn_p95": statistics.quantiles(durations, n=20)[18],
        "step_median": statistics.median(per_step),
        "step_p95": statistics.quantiles(per_step, n=20)[18],
        "queries_per_step": statistics.mean(queries) / steps,
    }


def main() -> None:
    member = setup()
    results = [measure(member, 1), measure(member, 5)]
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {connection.vendor}"
    lines = [
        f"### {datetime.now(UTC):%Y-%m-%d %H:%M} UTC — {machine}, {TURNS} turns per shape",
        "",
        "| shape | turn median ms | turn p95 ms | step median ms | step p95 ms | SQL queries per step |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['steps']} step{'s' if r['steps'] > 1 else ''} | {r['turn_median']:.1f} | {r['turn_p95']:.1f} | "
            f"{r['step_median']:.1f} | {r['step_p95']:.1f} | {r['queries_per_step']:.1f} |"
        )
    table = "\n".join(lines)
    print(table)
    if "--write" in sys.argv:
        with open(ROOT / "bench" / "README.md", "a") as readme:
            readme.write("\n" + table + "\n")


if __name__ == "__main__":
    main()

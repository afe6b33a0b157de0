"""`make bench-compare`: our turn against django-ai-assistant 0.4.0's, side by
side, interleaved, on this machine, both on SQLite.

The same work on both sides: a thread of 0 or 200 messages; the person's
message arrives; a scripted model (no network) either answers at once (1 step)
or calls `search_notes` over 50 notes and then answers (2 steps); everything
persisted. Ours is timed from `chat_submit` to the end of `run_turn` (every
durability point kept: each step's text, each tool call and result as they
happen); the peer's from `create_message` to its end (it persists all at the
end). The peer runs in its own virtualenv (.run/peer-venv) as a child process;
batches alternate between the two so machine noise hits both alike.

Prints the table; with --write, appends it to bench/README.md with the date
and the machine.
"""

import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench  # noqa: E402  (sets up Django on a throw-away SQLite database)
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from assistant.chat import chat_submit  # noqa: E402
from assistant.history import history_bytes, load_history  # noqa: E402
from assistant.loop import run_turn  # noqa: E402
from conversations.models import Message, Thread  # noqa: E402
from conversations.services import thread_create  # noqa: E402
from tests.fakes.scripted import ScriptedClient  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PEER_PYTHON = ROOT / ".run" / "peer-venv" / "bin" / "python"
SHAPES = [(0, 1), (0, 2), (200, 1), (200, 2)]
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "10"))
BATCH = int(os.environ.get("BENCH_BATCH", "10"))


def thread_of(member, history: int):
    """A conversation of `history` messages whose last turn ended (its counters kept)."""
    thread = thread_create(member)
    now = timezone.now()
    Message.objects.bulk_create([
        Message(client_id=uuid.uuid4(), thread=thread, seq=i,
                role="user" if i % 2 == 0 else "assistant",
                content=f"Message {i} about a trip to Zurich and what to pack.", created_at=now)
        for i in range(history)
    ])
    Thread.objects.filter(id=thread.id).update(next_seq=history,
                                                history_bytes=history_bytes(load_history(thread.id)))
    return thread.id


def ours(member, history: int, steps: int, count: int) -> list[dict]:
    results = []
    for _ in range(count):
        thread_id = thread_of(member, history)
        client = ScriptedClient(*bench.script(steps))
        connection.queries_log.clear()  # a full log (9,000 queries) would count nothing
        full_before = gc.get_stats()[2]["collections"]
        with CaptureQueriesContext(connection) as captured:
            started, started_cpu = time.perf_counter(), time.process_time()
            submitted = chat_submit(member, message="Search my notes for Zurich", conversation_id=thread_id)
            run_turn(submitted.turn_id, client=client)
            elapsed = (time.perf_counter() - started) * 1000
            cpu = (time.process_time() - started_cpu) * 1000
        assert Message.objects.filter(thread_id=thread_id).count() == history + 1 + steps
        results.append({"ms": elapsed, "cpu_ms": cpu, "queries": len(captured.captured_queries),
                        "full_gcs": gc.get_stats()[2]["collections"] - full_before})
    return results


class Peer:
    def __init__(self):
        self.process = subprocess.Popen(
            [str(PEER_PYTHON), str(ROOT / "bench" / "peer" / "turns.py")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
        )
        assert self.process.stdout.readline().strip() == "ready"

    def run(self, history: int, steps: int, count: int) -> list[dict]:
        self.process.stdin.write(f"{history} {steps} {count}\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)


def summary(results: list[dict]) -> dict:
    ms = [r["ms"] for r in results]
    return {
        "cpu_median": statistics.median(r["cpu_ms"] for r in results),
        "median": statistics.median(ms),
        "p95": statistics.quantiles(ms, n=20)[18],
        "queries": statistics.median(r["queries"] for r in results),
        "full_gcs_per_100": 100 * sum(r["full_gcs"] for r in results) / len(results),
    }


def main() -> None:
    bench.enqueue_turn_in_process()
    member = bench.setup()
    peer = Peer()
    runs = {("ours", shape): [] for shape in SHAPES} | {("peer", shape): [] for shape in SHAPES}
    for shape in SHAPES:  # warm-up, not counted
        ours(member, *shape, 2)
        peer.run(*shape, 2)
    for round_index in range(ROUNDS):
        for shape in SHAPES:
            # Alternate who goes first, so neither always runs on a warmer machine.
            for side in ("ours", "peer") if round_index % 2 == 0 else ("peer", "ours"):
                batch = ours(member, *shape, BATCH) if side == "ours" else peer.run(*shape, BATCH)
                runs[(side, shape)].extend(batch)
    peer.close()
    table = render(runs)
    print(table)
    if "--write" in sys.argv:
        with open(ROOT / "bench" / "README.md", "a") as readme:
            readme.write("\n" + table + "\n")


def render(runs) -> str:
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, sqlite"
    turns = ROUNDS * BATCH
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    lines = [
        f"### {datetime.now(UTC):%Y-%m-%d %H:%M} UTC — ours vs django-ai-assistant 0.4.0 — {machine}, "
        f"{turns} turns per shape and side, interleaved; load average at the end {load}",
        "",
        "Wall time medians and p95; CPU time (the process's, all its threads) is what other work on the "
        "machine disturbs least.",
        "",
        "| thread | shape | peer median | ours median | ours / peer | peer CPU | ours CPU | CPU ours / peer "
        "| peer p95 | ours p95 | peer queries | ours queries | full GCs per 100 turns (peer / ours) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for history, steps in SHAPES:
        p, o = summary(runs[("peer", (history, steps))]), summary(runs[("ours", (history, steps))])
        lines.append(
            f"| {history} msgs | {steps} step{'s' if steps > 1 else ''} | {p['median']:.1f} ms | "
            f"{o['median']:.1f} ms | {o['median'] / p['median']:.2f}× | {p['cpu_median']:.1f} ms | "
            f"{o['cpu_median']:.1f} ms | {o['cpu_median'] / p['cpu_median']:.2f}× | "
            f"{p['p95']:.1f} ms | {o['p95']:.1f} ms | "
            f"{p['queries']:.0f} | {o['queries']:.0f} | {p['full_gcs_per_100']:.0f} / {o['full_gcs_per_100']:.0f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()

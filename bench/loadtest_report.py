"""The load test's table, from locust's CSVs and bench/loadtest.sh's metrics
(printed; the script appends it to bench/README.md)."""

import csv
import json
import os
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path


def stats(path: Path) -> dict[str, dict]:
    with open(path, newline="") as handle:
        return {row["Name"]: row for row in csv.DictReader(handle)}


def machine() -> str:
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
                 platform.machine())
    memory = next(int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal"))
    return (f"{platform.machine()}, {os.cpu_count()} cores ({model}), {memory / 1024 / 1024:.0f} GiB, "
            f"Python {platform.python_version()}")


def ms(row: dict, column: str) -> str:
    return f"{float(row[column]):.0f}"


def table(out: Path) -> str:
    metrics = json.loads((out / "metrics.json").read_text())
    chat, hold = stats(out / "chat_stats.csv"), stats(out / "hold_stats.csv")
    post, turn = chat["POST /api/chat"], chat["turn (POST answered → turn_ended received)"]
    delay = chat["text delay (worker write → client)"]
    failures = int(chat["Aggregated"]["Failure Count"]) + int(hold["Aggregated"]["Failure Count"])
    streams = metrics["streams_open"]
    per_stream = (metrics["rss_open_kib"] - metrics["rss_before_kib"]) / max(streams, 1)
    rest = metrics["at_rest"]
    rows = [
        ("chat submissions per second, sustained (POST /api/chat, "
         f"{metrics['chat_users']} people for {metrics['chat_seconds']} s, each following its turn)",
         f"{float(post['Requests/s']):.2f} ({post['Request Count']} turns)", ""),
        ("POST /api/chat latency p50 / p95", f"{ms(post, '50%')} / {ms(post, '95%')} ms", ""),
        ("a whole turn, POST answered → turn_ended received, p50 / p95 (2 steps, a tool call, 40 ms chunks)",
         f"{ms(turn, '50%')} / {ms(turn, '95%')} ms", ""),
        ("text delay, worker writes → client receives, p50 / p95",
         f"{ms(delay, '50%')} / {ms(delay, '95%')} ms ({delay['Request Count']} text events)", "p95 ≤ 300 ms"),
        ("open streams held by 1 web process", f"{streams}", "≥ 1,000"),
        ("web process memory per open stream",
         f"{per_stream:.0f} KiB ({metrics['rss_before_kib'] // 1024} → {metrics['rss_open_kib'] // 1024} MiB)", ""),
        (f"database queries per second at rest, {streams} streams open ({rest['window_seconds']:.0f} s window "
         f"after the first quiet second, {rest.get('settled_seconds', 0)} s)",
         f"{rest['queries_per_second']} ({rest['queries']} statements, PostgreSQL's log)", "0"),
        (f"PostgreSQL connections open with {streams} streams open (all processes)", f"{rest['db_backends']}", ""),
        ("failed requests (both runs)", f"{failures}", "0"),
    ]
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"\n### {when} — make loadtest — {machine()}\n", "| measure | result | target |", "|---|---|---|"]
    lines += [f"| {name} | {value} | {target} |" for name, value, target in rows]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(table(Path(sys.argv[1])))

"""`make bench-scale`: does each hot path cost the person's (organization's,
page's) own data, or the whole deployment's? Not part of `make test`.

Two databases of one PostgreSQL: S1 and S10. Both hold the same probe
organization (its people and their data identical) and the same large one
(240 people); S10 holds 10× the other tenants of S1, small organizations and
a few large ones (sizes below, BENCH_SCALE_* to change them). Every path runs at
both sizes, interleaved (path by path, round by round, the size that goes first
alternating) so the machine's noise hits both alike. Per path: the SQL queries,
the median at each size, the ratio S10 ÷ S1, and whether any plan (EXPLAIN
ANALYZE, JSON, at S10) has a scan that reads 100× more rows than its statement
returns (and over 1,000: a person's own 300 messages counted to 1 is their own
data). Then the personal export's peak memory (tracemalloc) for a person with
10× the conversations of another. Appends the tables to bench/README.md with
--write.
"""

import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
WORKDIR = Path(tempfile.mkdtemp(prefix="assistant-bench-scale-"))
os.environ.update(SECRET_KEY="bench-only", DEBUG="0", RUN_DIR=str(WORKDIR), OFFLINE_MODEL_CHUNK_DELAY_MS="0",
                  LOG_LEVEL="ERROR", ALLOWED_HOSTS="testserver", SECURE_COOKIES="0")
os.environ.setdefault("ASSISTANT_KEYS_SECRET", "bench-only")
os.environ.setdefault("EMAIL_BACKEND", "django.core.mail.backends.locmem.EmailBackend")
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
os.environ.pop("REDIS_URL", None)
# No pool: the one connection is pointed at S1's database, then S10's (use()); a
# pool keeps connecting to the database it was made for.
os.environ["DATABASE_POOL_SIZE"] = "0"

ROUNDS = int(os.environ.get("BENCH_SCALE_ROUNDS", "21"))
# Other tenants at S1 (S10: 10× the organizations): organizations × people × conversations × messages.
ORGS = int(os.environ.get("BENCH_SCALE_ORGS", "50"))
PEOPLE, THREADS, MESSAGES = 10, 10, 10
PROBE = {"people": ROUNDS + 3, "threads": 20, "messages": 19}  # the probe organization, identical at both sizes
SIZES = {"S1": ORGS, "S10": 10 * ORGS}
# Besides the small ones, a few large organizations (scale_paths.CROWD's shape): 3 of S1's 50.
LARGE = {size: orgs * 3 // 50 for size, orgs in SIZES.items()}


def start_postgres() -> tuple[str, Path | None]:
    if os.environ.get("BENCH_DATABASE_URL"):
        return os.environ["BENCH_DATABASE_URL"], None
    WORKDIR.chmod(0o755)  # the server runs as the postgres user (scripts/pg.sh)
    folder = WORKDIR / "pg"
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = subprocess.run([str(ROOT / "scripts" / "pg.sh"), "start", str(folder), str(port)], check=True,
                         capture_output=True, text=True).stdout.strip()
    return url, folder


URL, PG_FOLDER = start_postgres()
BASE = URL.rsplit("/", 1)[0]
os.environ["DATABASE_URL"] = f"{BASE}/scale_s1"

import django  # noqa: E402

django.setup()

import psycopg  # noqa: E402
from django.db import connection  # noqa: E402

from bench import scale_paths  # noqa: E402
from bench.scale_seed import adopt_model_defaults, counts, seed_tenants  # noqa: E402


def use(size: str) -> None:
    """Point the one connection at this size's database."""
    connection.close()
    connection.settings_dict["NAME"] = f"scale_{size.lower()}"


def build(size: str) -> dict:
    with psycopg.connect(f"{BASE}/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS scale_{size.lower()}")
        admin.execute(f"CREATE DATABASE scale_{size.lower()}")
    use(size)
    from django.core.management import call_command

    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    adopt_model_defaults()
    seed_tenants("probe", orgs=1, **PROBE)
    seed_tenants("big", orgs=1, people=1, threads=10 * PROBE["threads"], messages=PROBE["messages"])
    seed_tenants("crowd", orgs=1, **scale_paths.CROWD)
    seed_tenants("other", orgs=SIZES[size], people=PEOPLE, threads=THREADS, messages=MESSAGES)
    seed_tenants("large", orgs=LARGE[size], **scale_paths.CROWD)
    context = scale_paths.prepare(ROUNDS)
    connection.close()
    with psycopg.connect(f"{BASE}/scale_{size.lower()}", autocommit=True) as db:
        db.execute("VACUUM ANALYZE")
    use(size)
    sizes = counts()
    print(f"{size}: built in {time.perf_counter() - started:.0f} s: {sizes}", flush=True)
    return {"context": context, "counts": sizes}


def run(built: dict) -> list[dict]:
    results = {name: {"S1": [], "S10": [], "queries": {}} for name in scale_paths.PATHS}
    for round_number in range(ROUNDS):
        for index, (name, path) in enumerate(scale_paths.PATHS.items()):
            order = ("S1", "S10") if (round_number + index) % 2 == 0 else ("S10", "S1")
            for size in order:
                use(size)
                elapsed, queries = scale_paths.timed(path, built[size]["context"], round_number)
                results[name][size].append(elapsed)
                results[name]["queries"][size] = queries
        print(f"round {round_number + 1}/{ROUNDS} done", flush=True)
    plans = {}
    for size in SIZES:
        use(size)
        plans[size] = {name: scale_paths.worst_plan(path, built[size]["context"], ROUNDS)
                       for name, path in scale_paths.PATHS.items()}
    rows = []
    for name in scale_paths.PATHS:
        worst = plans["S10"][name]
        # The same scan's rows at S1: equal when what it reads is the probe's own data.
        worst["read_s1"] = plans["S1"][name]["read"]
        worst["grows"] = worst["flagged"] and worst["read"] > 1.3 * max(worst["read_s1"], 1)
        s1, s10 = statistics.median(results[name]["S1"]), statistics.median(results[name]["S10"])
        if worst.get("sql"):
            print(f"{name}: worst {worst['where']} {worst['read']}/{worst['returned']}: {worst['sql']}", flush=True)
        rows.append({"path": name, "queries": results[name]["queries"], "s1": s1, "s10": s10,
                     "ratio": s10 / s1 if s1 else 1.0, "worst": worst})
    return rows


def table(rows: list[dict], built: dict, memory: list[dict]) -> str:
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        version = cursor.fetchone()[0].split()[0]
    sizes = "; ".join(f"{size}: " + ", ".join(f"{count:,} {name}" for name, count in built[size]["counts"].items())
                      for size in SIZES)
    lines = [
        f"### {datetime.now(UTC):%Y-%m-%d %H:%M} UTC — bench-scale, {machine}, PostgreSQL {version}, "
        f"{ROUNDS} rounds",
        "",
        f"Sizes (everything, probe included) — {sizes}.",
        "",
        "| path | queries | median S1 ms | median S10 ms | S10 ÷ S1 | worst scan at S10 (rows read / returned) | "
        "≥100× | worst scan's rows at S1 | grows with others |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        queries = row["queries"]
        shown = str(queries["S10"]) if queries["S1"] == queries["S10"] else f"{queries['S1']} / {queries['S10']}"
        worst = row["worst"]
        flagged = "**yes**" if worst["flagged"] else "no"
        lines.append(f"| {row['path']} | {shown} | {row['s1']:.1f} | {row['s10']:.1f} | {row['ratio']:.2f} | "
                     f"{worst['read']:,} / {worst['returned']:,} {worst['where']} | {flagged} | "
                     f"{worst['read_s1']:,} | {'**yes**' if worst['grows'] else 'no'} |")
    lines += ["", "| personal export (GET /api/me/export) | conversations | bytes | peak KB, streamed | "
              "peak KB, built whole (before) |", "|---|---|---|---|---|"]
    for item in memory:
        lines.append(f"| {item['who']} | {item['threads']} | {item['bytes']:,} | {item['peak_kb']:,} | "
                     f"{item['whole_kb']:,} |")
    return "\n".join(lines)


def main() -> None:
    try:
        built = {size: build(size) for size in SIZES}
        rows = run(built)
        use("S1")
        memory = scale_paths.export_memory(built["S1"]["context"])
        use("S10")
        report = table(rows, built, memory)
        print(report)
        if "--write" in sys.argv:
            with open(ROOT / "bench" / "README.md", "a") as readme:
                readme.write("\n" + report + "\n")
    finally:
        connection.close()
        if PG_FOLDER is not None:
            subprocess.run([str(ROOT / "scripts" / "pg.sh"), "stop", str(PG_FOLDER)], check=False)
        shutil.rmtree(WORKDIR, ignore_errors=True)


if __name__ == "__main__":
    main()

"""`make bench-turns`: many turns at once on ONE worker process.

The stack as shipped (`scripts/serve.sh worker`, `web` and `beat` with their
defaults) on a PostgreSQL and a Redis started here; the model is a fake
Anthropic server (tests/fakes/wire_servers.py, the official SDK runs for real)
whose every answer streams for MODEL_SECONDS. One turn alone first, then TURNS
posted at the same moment through `POST /api/chat`. Measured: the time until
the last one ends against one turn's, the worker's resident memory, and the
most PostgreSQL client connections of the whole stack (sampled every 0.2 s).
`--spread 2` then adds bench/turns_people.py's one organization against many.
`--write` appends the result to bench/README.md. Not part of `make test`.
"""

import argparse
import asyncio
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import print_and_append  # noqa: E402
from bench.turns_people import MANY, ONE, measure_spreads, seed_people, spread_table  # noqa: E402
from tests.fakes.wire_servers import WireServer, anthropic_events, anthropic_sse  # noqa: E402
from tests.sampling import Sampling  # noqa: E402

OPTION = "anthropic-claude-haiku-4-5"
PIECES = 32
BENCH_APP = "bench-turns"  # this script's own connections, not counted
OBSERVER = "bench_observer"  # this script's database role: its own statements are not the turns'
STATEMENTS = "-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.max=10000"
# The stack's own statements: not this script's role, nor the foreign keys' checks that
# PostgreSQL's triggers run inside a statement ("SELECT 1 FROM ONLY … FOR KEY SHARE").
OWN_STATEMENTS = ("FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid "
                  "WHERE r.rolname <> %s AND query NOT LIKE 'SELECT %% FROM ONLY %%FOR KEY SHARE OF x'")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def slow_reply(seconds: float):
    """A text answer in PIECES pieces, the whole over `seconds`."""
    words = tuple(f"word{n} " for n in range(PIECES * 2))
    reply = anthropic_sse(anthropic_events(text=words))
    reply.chunk_size = -(-len(reply.body) // PIECES)
    reply.interval = seconds / (PIECES - 1)
    return reply


def serve_model(count: int, seconds: float) -> None:
    """The fake model, in its own process (not sharing this one's interpreter):
    prints its URL, answers `count` requests, stops when stdin closes."""
    with WireServer() as wire:
        wire.reply(*(slow_reply(seconds) for _ in range(count)))
        print(wire.url, flush=True)
        sys.stdin.read()


def start_model(count: int, seconds: float) -> tuple[str, subprocess.Popen]:
    process = subprocess.Popen([sys.executable, __file__, "--serve-model", str(count), str(seconds)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    return process.stdout.readline().strip(), process


def start_databases(out: Path) -> tuple[str, str, str, list]:
    """PostgreSQL (counting statements: pg_stat_statements) and Redis; the
    stack's URL, this script's own (another role: its polling is not counted), Redis's."""
    url = subprocess.check_output([str(ROOT / "scripts/pg.sh"), "start", str(out / "pg"), str(free_port())],
                                  text=True, env=os.environ | {"PG_OPTIONS": STATEMENTS}).strip()
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute("CREATE DATABASE assistant")
        connection.execute(f"CREATE ROLE {OBSERVER} SUPERUSER LOGIN")
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("CREATE EXTENSION pg_stat_statements")
    observer_url = url.replace("postgres://postgres@", f"postgres://{OBSERVER}@", 1)
    redis_port = free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                              "--appendonly", "no", "--dir", str(out)], stdout=open(out / "redis.log", "wb"),  # noqa: SIM115
                             stderr=subprocess.STDOUT)
    return url, observer_url, f"redis://127.0.0.1:{redis_port}/0", [redis]


class Footprint:
    """What the stack asked of PostgreSQL between `start` and `stop`: its
    statements (pg_stat_statements, BEGIN and COMMIT included, this script's
    own role left out) and the bytes it wrote (WAL)."""

    def __init__(self, observer_url: str):
        self.observer_url = observer_url
        self.statements = self.wal_bytes = 0

    def _read(self) -> tuple[int, int]:
        with psycopg.connect(self.observer_url, autocommit=True) as connection:
            statements = connection.execute(f"SELECT coalesce(sum(calls), 0) {OWN_STATEMENTS}",
                                            [OBSERVER]).fetchone()[0]
            lsn = connection.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')").fetchone()[0]
        return int(statements), int(lsn)

    def start(self) -> None:
        self.statements, self.wal_bytes = self._read()

    def stop(self) -> None:
        statements, wal = self._read()
        self.statements, self.wal_bytes = statements - self.statements, wal - self.wal_bytes

    def most_called(self, count: int = 10) -> list[tuple[int, str]]:
        """The stack's most frequent statements since the reset (their calls, their text's start)."""
        with psycopg.connect(self.observer_url, autocommit=True) as connection:
            return connection.execute(
                f"SELECT calls, left(regexp_replace(query, '\\s+', ' ', 'g'), 90) {OWN_STATEMENTS} "
                "ORDER BY calls DESC, query LIMIT %s", [OBSERVER, count]).fetchall()

    def reset(self) -> None:
        with psycopg.connect(self.observer_url, autocommit=True) as connection:
            connection.execute("SELECT pg_stat_statements_reset()")


def seed(env: dict[str, str]) -> str:
    """An organization with ample credits and a person's API token."""
    code = (
        "import django; django.setup()\n"
        "from django.contrib.auth import get_user_model\n"
        "from assistant_engine.organizations.members import Member\n"
        "from assistant_engine.organizations.models import Membership, Organization\n"
        "from assistant_engine.organizations.tokens import create_token\n"
        "org = Organization.objects.create(slug='bench', name='Bench', monthly_credits=10_000_000)\n"
        "user = get_user_model().objects.create_user(username='bench', password='bench-password')\n"
        "Membership.objects.create(organization=org, user=user, role='member')\n"
        "print(create_token(Member(org.id, user.id, 'member', 'bench'), days=1)[1])\n"
    )
    output = subprocess.check_output([sys.executable, "-c", code], env=env, cwd=ROOT, text=True)
    return output.strip().splitlines()[-1]  # after the start-up's log lines


def start_stack(env: dict[str, str], out: Path, processes: dict[str, subprocess.Popen]) -> None:
    """Web, worker and beat, into `processes` as they start (the caller stops them, started or not)."""
    for kind in ("worker", "web", "beat"):
        log = open(out / f"{kind}.log", "wb")  # noqa: SIM115 (open for the process's life)
        # PGAPPNAME (libpq's): the connections are counted per kind of process.
        processes[kind] = subprocess.Popen([str(ROOT / "scripts/serve.sh"), kind], env=env | {"PGAPPNAME": kind},
                                           cwd=ROOT,
                                           stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready = "ready" in (out / "worker.log").read_text(errors="replace")
        try:
            socket.create_connection(("127.0.0.1", int(env["PORT"])), 1).close()
        except OSError:
            ready = False
        if ready:
            return
        time.sleep(0.2)
    raise TimeoutError(f"the stack did not start: see {out}")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    """CPU time of a process and its children (gunicorn's workers), user + system."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    own = sum(int(value) for value in fields[11:13]) / os.sysconf("SC_CLK_TCK")
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    return own + sum(cpu_seconds(int(child)) for child in children)


class Sampler(Sampling):
    """The worker's resident memory and the stack's PostgreSQL client
    connections (per kind of process), every 0.2 s; keeps the highest of each."""

    interval = 0.2

    def __init__(self, database_url: str, worker_pid: int):
        super().__init__()
        self.database_url, self.worker_pid = database_url, worker_pid
        self.rss = self.connections = 0.0
        self.by_kind: dict[str, int] = {}
        self.connection: psycopg.Connection | None = None

    def sample(self) -> None:
        if self.connection is None:
            self.connection = psycopg.connect(self.database_url, autocommit=True, application_name=BENCH_APP)
        counts = dict(self.connection.execute(
            "SELECT application_name, count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
            "AND application_name <> %s GROUP BY 1", [BENCH_APP]).fetchall())
        self.connections = max(self.connections, sum(counts.values()))
        for kind, count in counts.items():
            self.by_kind[kind] = max(self.by_kind.get(kind, 0), count)
        self.rss = max(self.rss, rss_mib(self.worker_pid))

    def done(self) -> None:
        if self.connection is not None:
            self.connection.close()


def run_turns(base: str, tokens: list[str], observer_url: str) -> tuple[float, dict[str, int], list]:
    """Posts a turn per token at once (a token may repeat: the same person
    again); seconds from the posts until the last turn ended (its
    finished_at), their statuses and ids."""
    count = len(tokens)

    async def post_all() -> list[str]:
        limits = httpx.Limits(max_connections=count)
        async with httpx.AsyncClient(base_url=base, timeout=300, limits=limits) as client:
            async def post(token: str) -> str:
                # A burst beyond the database pool is a 503 busy with Retry-After: a client waits and
                # tries again, as a real one does (counted: it is part of what the burst costs). On a
                # connection of its own: a kept-alive one the server closed meanwhile fails a POST (ReadError).
                while (response := await client.post("/api/chat", json={"message": "Tell me a long story"},
                                                     headers={"Authorization": f"Bearer {token}",
                                                              "Connection": "close"})
                       ).status_code == 503:
                    busy.append(1)
                    await asyncio.sleep(float(response.headers.get("Retry-After", "1")))
                response.raise_for_status()
                return response.json()["turnId"]

            return await asyncio.gather(*(post(token) for token in tokens))

    busy: list[int] = []

    started, started_at = time.monotonic(), time.time()
    turn_ids = asyncio.run(post_all())
    posted = time.monotonic() - started
    with psycopg.connect(observer_url, autocommit=True, application_name=BENCH_APP) as connection:
        while True:
            rows = connection.execute("SELECT status, count(*) FROM assistant_turn WHERE id = ANY(%s) GROUP BY 1",
                                      [turn_ids]).fetchall()
            statuses = dict(rows)
            if sum(n for status, n in statuses.items() if status in ("done", "failed", "cancelled")) == count:
                # The database's clock (this machine's): not this script's polling.
                last_started, last_finished = connection.execute(
                    "SELECT extract(epoch FROM max(started_at)), extract(epoch FROM max(finished_at)) "
                    "FROM assistant_turn WHERE id = ANY(%s)", [turn_ids]).fetchone()
                statuses |= {"posted_s": round(posted, 1), "last_started_s": round(float(last_started) - started_at, 1),
                             "busy_retried": len(busy)}
                return float(last_finished) - started_at, statuses, turn_ids
            if time.monotonic() - started > 600:
                raise TimeoutError(f"turns still running after 600 s: {statuses}")
            time.sleep(0.05)


def held_credits(observer_url: str) -> int:
    with psycopg.connect(observer_url, autocommit=True, application_name=BENCH_APP) as connection:
        return connection.execute("SELECT coalesce(sum(reserved_micros), 0) FROM credits_creditaccount").fetchone()[0]


def steps_of(observer_url: str, turn_ids: list) -> int:
    with psycopg.connect(observer_url, autocommit=True, application_name=BENCH_APP) as connection:
        return int(connection.execute("SELECT coalesce(sum(steps), 0) FROM assistant_turn WHERE id = ANY(%s)",
                                      [turn_ids]).fetchone()[0])


def measure(turns: int, model_seconds: float, out: Path, worker_concurrency: int | None = None,
            spread_rounds: int = 0) -> dict:  # rounds of bench/turns_people.py's spreads, after the run
    database_url, observer_url, redis_url, extras = start_databases(out)
    env = dict(os.environ, PYTHONPATH=str(ROOT), DJANGO_SETTINGS_MODULE="config.settings", DEBUG="0",
               SECRET_KEY="bench-only-secret", ASSISTANT_KEYS_SECRET="bench-only-keys-secret",
               EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend", DATABASE_URL=database_url,
               REDIS_URL=redis_url, ASSISTANT_MODEL=OPTION, ANTHROPIC_API_KEY="bench-key",
               ASSISTANT_ALLOW_US_PROCESSING="1", THROTTLE_CHAT="100000/minute", HOST="127.0.0.1",
               PORT=str(free_port()), ALLOWED_HOSTS="127.0.0.1", RUN_DIR=str(out / "run"),
               STATIC_ROOT=str(out / "static"), LOG_LEVEL="INFO")
    for name in ("WORKER_CONCURRENCY", "WORKER_POOL", "WEB_CONCURRENCY", "DATABASE_POOL_SIZE", "WORKER_OPTIONS"):
        env.pop(name, None)  # serve.sh's defaults
    if worker_concurrency:
        env["WORKER_CONCURRENCY"] = str(worker_concurrency)  # the operator's 1,000-thread worker (issue 36.1)
    processes: dict[str, subprocess.Popen] = {}
    model_url, model = start_model(turns + 2 + 2 * turns * spread_rounds, model_seconds)
    extras.append(model)
    try:
        env["ANTHROPIC_BASE_URL"] = model_url
        subprocess.run([str(ROOT / "scripts/serve.sh"), "release"], env=env, cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        token = seed(env)
        people = {spread: seed_people(env, ROOT, spread, turns) for spread in (ONE, MANY)} if spread_rounds else {}
        start_stack(env, out, processes)
        base = f"http://127.0.0.1:{env['PORT']}"
        run_turns(base, [token], observer_url)  # warm-up: first requests, the SDK's client
        one, _, _ = run_turns(base, [token], observer_url)
        idle_rss = rss_mib(processes["worker"].pid)
        cpu_before = {kind: cpu_seconds(process.pid) for kind, process in processes.items()}
        footprint = Footprint(observer_url)
        footprint.reset()  # the counts below are the run's: the most called statements too
        footprint.start()
        with Sampler(observer_url, processes["worker"].pid) as sampler:
            total, statuses, turn_ids = run_turns(base, [token] * turns, observer_url)
        footprint.stop()
        cpu = {kind: round(cpu_seconds(process.pid) - cpu_before[kind], 2) for kind, process in processes.items()}
        threads, most_called = len(os.listdir(f"/proc/{processes['worker'].pid}/task")), footprint.most_called()
        spreads = measure_spreads(run_turns, base, observer_url, people, spread_rounds) if people else None
        return {"turns": turns, "model_seconds": model_seconds, "one": one, "total": total,
                "statuses": statuses, "idle_rss": idle_rss, "rss": sampler.rss,
                "connections": sampler.connections, "connections_by_kind": sampler.by_kind,
                "worker_threads": threads, "cpu_seconds": cpu, "steps": steps_of(observer_url, turn_ids),
                "statements": footprint.statements, "wal_bytes": footprint.wal_bytes,
                "most_called": most_called,
                "worker_concurrency": worker_concurrency, "held_after": int(held_credits(observer_url)),
                "spreads": spreads}
    finally:
        for process in (*processes.values(), *extras):
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=30)
        subprocess.run([str(ROOT / "scripts/pg.sh"), "stop", str(out / "pg")], check=False)


def report(result: dict) -> str:
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    ratio, turns = result["total"] / result["one"], result["turns"]
    per_turn = (result["rss"] - result["idle_rss"]) / result["turns"] * 1024
    kinds = ", ".join(f"{kind or '?'} {count}" for kind, count in sorted(result["connections_by_kind"].items()))
    return (
        f"\n### {when} — {result['turns']} turns at once on one worker process (`make bench-turns`) — "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, PostgreSQL + Redis; "
        f"load average at the end {load}\n\n"
        f"`scripts/serve.sh` defaults (worker: threads pool, {result['worker_concurrency'] or 200} threads; "
        "web: 2 processes; beat), a fake "
        f"Anthropic server streaming each answer over {result['model_seconds']:g} s.\n\n"
        "| figure | value | target |\n|---|---|---|\n"
        f"| one turn alone (POST → its end) | {result['one']:.1f} s | |\n"
        f"| {result['turns']} turns posted at once → the last ended | {result['total']:.1f} s "
        f"({ratio:.2f}× one turn) | ≤ 3× |\n"
        f"| turns done (of {result['turns']}); posts answered 503 busy and tried again | "
        f"{result['statuses'].get('done', 0)}; {result['statuses']['busy_retried']} | all; |\n"
        f"| after the posts: all answered; the last turn started | {result['statuses']['posted_s']} s; "
        f"{result['statuses']['last_started_s']} s | |\n"
        f"| CPU seconds during the run (worker; web processes) | {result['cpu_seconds']['worker']}; "
        f"{result['cpu_seconds']['web']} | |\n"
        f"| CPU per turn (worker; web), from the processes' own counters | "
        f"{result['cpu_seconds']['worker'] / turns * 1000:.1f} ms; "
        f"{result['cpu_seconds']['web'] / turns * 1000:.1f} ms | |\n"
        f"| SQL statements per turn; per step (web and worker, BEGIN/COMMIT included) | "
        f"{result['statements'] / turns:.1f}; {result['statements'] / max(result['steps'], 1):.1f} | |\n"
        f"| bytes written per turn (PostgreSQL's WAL) | {result['wal_bytes'] / turns / 1024:.1f} KiB | |\n"
        f"| worker resident memory, peak (idle after one turn) | {result['rss']:.0f} MiB "
        f"({result['idle_rss']:.0f} MiB) | ≤ 1 GiB |\n"
        f"| memory per running turn ((peak − idle) / turns) | {per_turn:.0f} KiB | |\n"
        f"| PostgreSQL client connections, whole stack, peak | {result['connections']:.0f} "
        f"(peak per kind: {kinds}) | ≤ 60 |\n"
        f"| credits held after the run | {result['held_after']} µ | 0 |\n"
        + most_called_table(result)
        + (spread_table(result["spreads"]) if result["spreads"] else "")
    )


def most_called_table(result: dict) -> str:
    """The statements a turn runs most (pg_stat_statements), per turn: where its queries go."""
    rows = "".join(f"| {calls / result['turns']:.2f} | `{text.replace('|', '/')}` |\n"
                   for calls, text in result["most_called"])
    return f"\nThe most frequent statements, per turn:\n\n| per turn | statement |\n|---|---|\n{rows}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--model-seconds", type=float, default=8.0)
    parser.add_argument("--worker-concurrency", type=int, help="the worker's threads (serve.sh's default: 200)")
    parser.add_argument("--spread", type=int, default=0, metavar="ROUNDS",
                        help="then ROUNDS rounds of --turns people of one organization, and of as many organizations")
    parser.add_argument("--write", action="store_true", help="append the result to bench/README.md")
    parser.add_argument("--serve-model", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_model:
        return serve_model(int(args.serve_model[0]), float(args.serve_model[1]))
    if shutil.which("redis-server") is None:
        sys.exit("redis-server is needed (apt-get install redis-server)")
    out = Path(tempfile.mkdtemp(prefix="bench-turns-"))
    out.chmod(0o755)  # the postgres user reaches its data folder inside
    result = measure(args.turns, args.model_seconds, out, args.worker_concurrency, args.spread)
    print(json.dumps(result, indent=2, default=str))
    print_and_append(report(result), args.write)
    print(f"logs: {out}")


if __name__ == "__main__":
    main()

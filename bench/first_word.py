"""`make bench-first-word`: from `POST /api/chat` to the first `text` event at the
client, with the offline model (it answers at once, then 40 ms a chunk), as the
page does it: the POST, then the turn's event stream at once.

Two stacks, each started here in a temporary folder and stopped at the end:
  embedded     `make run`'s: SQLite, the folder broker, `manage.py runserver`, a
               Celery worker with beat (scripts/run.sh's command line);
  production   `make serve`'s: PostgreSQL, Redis, scripts/serve.sh web (2 processes) and worker.
Turns are sent one after the other (BENCH_TURNS, default 40), each followed to
its end, with a pause between them (BENCH_PAUSE seconds, an idle person).
Prints the table (BENCH_DETAIL=1: each turn's POST and publication times too);
`--write` appends it to bench/README.md. Not part of `make test`.
"""

import argparse
import http.client
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
PY = str(PROJECT / ".venv/bin/python")
CELERY = str(PROJECT / ".venv/bin/celery")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def process(command: list[str], env: dict, log: Path):
    with open(log, "wb") as output:
        child = subprocess.Popen(command, cwd=PROJECT, env=env, stdout=output, stderr=subprocess.STDOUT,
                                 start_new_session=True)
    try:
        yield child
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGTERM)
            try:
                child.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait(10)


def wait_ready(port: int, log: Path, text: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            try:
                socket.create_connection(("127.0.0.1", port), 1).close()
                return
            except OSError:
                pass
        time.sleep(0.2)
    raise SystemExit(f"not ready after {timeout}s: see {log}")


def seed(env: dict) -> str:
    out = subprocess.run([PY, "bench/loadtest_seed.py", "0"], cwd=PROJECT, env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["token"]


def base_env(folder: Path, port: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(PROJECT), "RUN_DIR": str(folder / "run"), "ASSISTANT_MODEL": "offline",
           "ALLOWED_HOSTS": "127.0.0.1", "HOST": "127.0.0.1", "PORT": str(port), "LOG_LEVEL": "WARNING",
           "STATIC_ROOT": str(folder / "static"), "PYTHONUNBUFFERED": "1",
           "THROTTLE_CHAT": "10000/minute"}  # one person sends them all
    for name in ("REDIS_URL", "CELERY_BROKER_URL", "DATABASE_URL", "DJANGO_SETTINGS_MODULE",
                 "OFFLINE_MODEL_CHUNK_DELAY_MS"):
        env.pop(name, None)
    (folder / "run").mkdir()
    return env


@contextmanager
def embedded(folder: Path):
    port = free_port()
    env = {**base_env(folder, port), "DEBUG": "1", "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}"}
    subprocess.run([PY, "manage.py", "migrate", "--noinput"], cwd=PROJECT, env=env, check=True, capture_output=True)
    token = seed(env)
    with ExitStack() as stack:
        stack.enter_context(process(
            [CELERY, "-A", "config", "worker", "--beat", "--loglevel=INFO", "--concurrency=2",
             f"--schedule={folder / 'run/celerybeat-schedule'}"], env, folder / "worker.log"))
        stack.enter_context(process([PY, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"], env,
                                    folder / "assistant_engine.web.log"))
        wait_ready(port, folder / "worker.log", "ready")
        yield port, token


@contextmanager
def production(folder: Path):
    port = free_port()
    env = {**base_env(folder, port), "DEBUG": "0", "DJANGO_SETTINGS_MODULE": "config.settings",
           "SECRET_KEY": "bench-only-secret", "ASSISTANT_KEYS_SECRET": "bench-only-keys-secret",
           "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend", "LOG_LEVEL": "INFO"}
    pg_port, redis_port = free_port(), free_port()
    os.chmod(folder, 0o755)  # the postgres user reaches its data folder inside
    url = subprocess.run([str(PROJECT / "scripts/pg.sh"), "start", str(folder / "pg"), str(pg_port)], cwd=PROJECT,
                         check=True, capture_output=True, text=True).stdout.strip()
    try:
        admin = f"postgres://postgres@127.0.0.1:{pg_port}/postgres"
        subprocess.run([PY, "-c", "import psycopg, sys; psycopg.connect(sys.argv[1], autocommit=True)"
                        ".execute('CREATE DATABASE assistant')", admin], check=True)
        env.update(DATABASE_URL=url, REDIS_URL=f"redis://127.0.0.1:{redis_port}/0")
        with ExitStack() as stack:
            stack.enter_context(process([shutil.which("redis-server") or "redis-server", "--port", str(redis_port),
                                         "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], env,
                                        folder / "redis.log"))
            time.sleep(0.5)
            subprocess.run(["scripts/serve.sh", "release"], cwd=PROJECT, env=env, check=True, capture_output=True)
            token = seed(env)
            stack.enter_context(process(["scripts/serve.sh", "worker"], env, folder / "worker.log"))
            stack.enter_context(process(["scripts/serve.sh", "web"], env, folder / "assistant_engine.web.log"))
            wait_ready(port, folder / "worker.log", "ready")
            yield port, token
    finally:
        subprocess.run([str(PROJECT / "scripts/pg.sh"), "stop", str(folder / "pg")], cwd=PROJECT, check=False)


def first_word(port: int, token: str) -> tuple[float, float, float | None]:
    """Seconds from sending the POST to its answer and to reading the first `text`
    event, and to the worker's publication of the first text it published (its
    `at`, production only); the turn is then followed to its end."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    start, wall = time.perf_counter(), time.time()
    post = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    post.request("POST", "/api/chat", body=json.dumps({"message": "Hello"}), headers=headers)
    answer = post.getresponse()
    body = answer.read()
    if answer.status != 202:
        raise SystemExit(f"POST /api/chat answered {answer.status}: {body[:200]!r}")
    turn_id, answered = json.loads(body)["turnId"], time.perf_counter() - start
    stream = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    stream.request("GET", f"/api/turns/{turn_id}/events", headers=headers)
    first = published = None
    for raw in stream.getresponse():
        line = raw.decode().strip()
        if first is None and line == "event: text":
            first = time.perf_counter() - start
        elif first is not None and published is None and line.startswith("data: "):
            at = json.loads(line[6:]).get("at")
            published = at / 1000 - wall if at else None
        if line == "event: turn_ended":
            break
    stream.close()
    post.close()
    if first is None:
        raise SystemExit(f"turn {turn_id} ended without text")
    return first, answered, published


def measure(port: int, token: str, turns: int, pause: float, detail: bool) -> list[float]:
    first_word(port, token)  # warm-up: imports, the first connection
    samples = []
    for _ in range(turns):
        time.sleep(pause)
        first, answered, published = first_word(port, token)
        samples.append(first)
        if detail:
            print(f"  POST answered {answered * 1000:.0f} ms, first text published "
                  f"{'-' if published is None else f'{published * 1000:.0f} ms'}, read {first * 1000:.0f} ms")
    return samples


def row(stack: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (f"| {stack} | {len(samples)} | {statistics.median(samples) * 1000:.0f} ms | {p95 * 1000:.0f} ms | "
            f"{ordered[0] * 1000:.0f} ms | {ordered[-1] * 1000:.0f} ms |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stack", choices=["embedded", "production", "both"], default="both")
    parser.add_argument("--write", action="store_true", help="append the table to bench/README.md")
    args = parser.parse_args()
    turns = int(os.environ.get("BENCH_TURNS", "40"))
    pause = float(os.environ.get("BENCH_PAUSE", "0.5"))
    stacks = {"embedded": embedded, "production": production}
    rows = []
    for name in (["embedded", "production"] if args.stack == "both" else [args.stack]):
        with tempfile.TemporaryDirectory(prefix="first-word-") as folder, stacks[name](Path(folder)) as (port, token):
            rows.append(row(name, measure(port, token, turns, pause, bool(os.environ.get("BENCH_DETAIL")))))
            print(rows[-1], flush=True)
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    table = "\n".join([
        f"\n### {datetime.now(UTC):%Y-%m-%d %H:%M} UTC — first word (`make bench-first-word`) — {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; load average at the end {load}\n",
        "From sending `POST /api/chat` to reading the first `text` event of the turn's stream (opened at once "
        "after the POST's answer), the offline model; one turn at a time.\n",
        "| stack | turns | median | p95 | min | max |", "|---|---|---|---|---|---|", *rows, ""])
    print(table)
    if args.write:
        with open(PROJECT / "bench/README.md", "a") as readme:
            readme.write(table)


if __name__ == "__main__":
    sys.exit(main())

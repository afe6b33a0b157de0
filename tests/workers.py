"""Real Celery worker processes for tests, on the same test database and broker
as the test process."""

import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connection

PROJECT = Path(__file__).resolve().parent.parent


def test_database_url() -> str:
    """The URL of the test database this process uses (after pytest-django set it up)."""
    params = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{params['NAME']}"
    user = params.get("USER") or "postgres"
    host, port = params.get("HOST") or "127.0.0.1", params.get("PORT") or 5432
    return f"postgres://{user}@{host}:{port}/{params['NAME']}"


def worker_environment(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings_test",
        DATABASE_URL=test_database_url(),
        TEST_SQLITE_NAME="",
        BROKER_DIR=str(settings.BROKER_DIR),
        CELERY_BROKER_URL=settings.CELERY_BROKER_URL,
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


@contextmanager
def celery_worker(*, name: str = "w1", log_path: Path | None = None, queues: str = "", concurrency: int = 4,
                  **env: str):
    """A worker process, stopped at the end. Yields the Popen. Its pool is the
    production one (scripts/serve.sh): `concurrency` threads in one process.
    `queues`: comma-separated queues to consume instead of the default one."""
    log_path = log_path or Path(settings.RUN_DIR) / f"worker-{name}-{os.getpid()}.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=threads", f"--concurrency={concurrency}",
             "--loglevel=INFO", f"--hostname={name}@%h", "--without-gossip", "--without-mingle",
             "--without-heartbeat", *(["--queues", queues] if queues else [])],
            cwd=PROJECT, env=worker_environment(**env), stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_for_log(log_path, "ready", timeout=60)
            yield process
        finally:
            stop_process_group(process)


def wait_for_log(path: Path, text: str, *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in path.read_text(errors="replace"):
            return
        time.sleep(0.1)
    raise TimeoutError(f"{text!r} not in {path} after {timeout}s:\n{path.read_text(errors='replace')[-3000:]}")


def stop_process_group(process: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    if process.poll() is None:
        try:
            os.killpg(process.pid, sig)
            process.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def wait_until(predicate, *, timeout: float = 60, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError("condition not met in time")

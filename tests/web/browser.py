"""The real parts behind the browser tests: a Celery worker process, the
broker folder it shares with the live server, and headless Chromium.

- The live server is pytest-django's (a thread of the test process, on the
  test database).
- The worker is `celery -A config worker --pool=solo`, a separate process with
  DATABASE_URL pointing at the same test database (the SQLite file, or the
  PostgreSQL test database) and its own broker folder for this test run, so it
  can't pick up tasks of a `make run` worker or of another test run.
- Chromium is Debian's /usr/bin/chromium, driven by Playwright's sync API.
"""

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import kombu.pools
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
WORKER_READY_SECONDS = 60


def broker_options(folder: Path) -> dict:
    return {
        "data_folder_in": str(folder / "queue"),
        "data_folder_out": str(folder / "queue"),
        "processed_folder": str(folder / "processed"),
        # Without it kombu writes its control (broadcast) folder into the
        # current directory: a stray `control/` in the work tree.
        "control_folder": str(folder / "control"),
        "store_processed": False,
    }


@contextmanager
def broker_folder(folder: Path) -> Iterator[None]:
    """Point this process's Celery app (what the live server enqueues with) at
    `folder` for a while, then back: other tests' workers keep their own folder."""
    from config.celery import app

    options = broker_options(folder)
    for path in {options["data_folder_in"], options["processed_folder"], options["control_folder"]}:
        os.makedirs(path, exist_ok=True)
    saved = (settings.CELERY_BROKER_URL, settings.CELERY_BROKER_TRANSPORT_OPTIONS,
             app.conf.broker_url, app.conf.broker_transport_options)
    _configure(app, "filesystem://", options, "filesystem://", options)
    try:
        yield
    finally:
        _configure(app, *saved)


def _configure(app, setting_url, setting_options, app_url, app_options) -> None:
    settings.CELERY_BROKER_URL = setting_url
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = setting_options
    app.conf.broker_url = app_url
    app.conf.broker_transport_options = app_options
    # Pooled connections would still point at the previous folder: the app
    # caches its pools on first use, and kombu keeps producer pools globally.
    kombu.pools.reset()
    app._pool = None
    app.amqp._producer_pool = None


def test_database_url() -> str:
    """The URL of the test database this process is using (after its creation)."""
    database = connection.settings_dict
    if database["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{Path(database['NAME']).resolve()}"
    parts = urlsplit(settings.DATABASE_URL)
    return urlunsplit(parts._replace(path="/" + quote(database["NAME"])))


@contextmanager
def celery_worker(folder: Path, log_path: Path, extra_env: dict[str, str] | None = None
                  ) -> Iterator[subprocess.Popen]:
    """A worker process on the test database and `folder`, ready to take turns
    (`extra_env`: settings of its own, e.g. a provider pointed at a wire server)."""
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.web.worker_settings",
        "DATABASE_URL": test_database_url(),
        "CELERY_BROKER_URL": "filesystem://",
        "BROKER_DIR": str(folder),
        # The loop writes the text every 0.25 s and the SSE stream polls every
        # 0.2 s: 80 ms between chunks makes the help text arrive in several pieces.
        "OFFLINE_MODEL_CHUNK_DELAY_MS": os.environ.get("BROWSER_TEST_CHUNK_DELAY_MS", "80"),
        "LOG_LEVEL": "INFO",
        "PYTHONPATH": str(ROOT),
        **(extra_env or {}),
    }
    environment.pop("REDIS_URL", None)
    command = [
        sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo", "--loglevel=INFO",
        "--without-heartbeat", "--without-gossip", "--without-mingle", f"--hostname=browser-tests-{os.getpid()}@%h",
    ]
    with log_path.open("w") as log:
        process = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_until_ready(process, log_path)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_ready(process: subprocess.Popen, log_path: Path) -> None:
    deadline = time.monotonic() + WORKER_READY_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"The Celery worker exited ({process.returncode}):\n{log_path.read_text()[-4000:]}")
        if " ready." in log_path.read_text():
            return
        time.sleep(0.1)
    raise RuntimeError(f"The Celery worker was not ready in {WORKER_READY_SECONDS} s:\n{log_path.read_text()[-4000:]}")

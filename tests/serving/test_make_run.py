"""Issue 34.9: `make run` (scripts/run.sh) serves what the README says it does:
the pages and their static files, and /mcp to the official MCP client (an
ASGI server, as in production); it seeds the demo once. Started here as a
person would start it, on a free port, its database and broker in a
temporary folder; stopped as Ctrl-C stops it (its whole process group)."""

import asyncio
import os
import signal
import subprocess
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.maintenance.conftest import free_port
from tests.surfaces.mcp_server import mcp_session
from tests.workers import wait_until

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.worker


def status_of(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 (a local URL)
            return response.status
    except OSError:
        return None


@pytest.fixture
def make_run(tmp_path):
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "DEBUG", "PYTEST"))}
    for name in ("REDIS_URL", "CELERY_BROKER_URL", "ASSISTANT_MODEL", "TELEGRAM_BOT_TOKEN", "SECRET_KEY"):
        env.pop(name, None)
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'demo.sqlite3'}", RUN_DIR=str(tmp_path / "run"), PORT=str(port))
    log = (tmp_path / "make-run.log").open("w")
    process = subprocess.Popen(["bash", "scripts/run.sh"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    site = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: status_of(f"{site}/login/") == 200 or process.poll() is not None, timeout=120,
                   interval=0.5)
        assert process.poll() is None, (tmp_path / "make-run.log").read_text()[-3000:]
        yield site, env
    finally:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        log.close()


def test_make_run_serves_the_pages_their_static_files_and_mcp(make_run):
    site, env = make_run
    assert status_of(f"{site}/static/assistant/app.css") == 200  # no collectstatic: served from the apps
    created = subprocess.run(["scripts/manage.sh", "create_token", "demo", "--organization", "demo", "--mcp-only"],
                             cwd=ROOT, env=env, capture_output=True, text=True, check=True, timeout=120)
    token = created.stdout.split()[-1]

    async def tools():
        async with mcp_session(site, token) as session:
            return [tool.name for tool in (await session.list_tools()).tools]

    # In a thread of its own: a browser test earlier in the session leaves Playwright's loop running in this one.
    with ThreadPoolExecutor(max_workers=1) as thread:
        assert {"search_notes", "send_email"} <= set(thread.submit(asyncio.run, tools()).result(timeout=120))

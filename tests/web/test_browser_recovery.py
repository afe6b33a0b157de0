"""Recovery, in real Chromium: the stream comes back by itself after the web
server restarts mid-reply, other tabs follow a turn, the draft survives a
reload. The restart test runs its own web server process (Django's runserver
on the test database), so it can be stopped and started again for real."""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager

import pytest

from assistant.models import Turn
from assistant_engine.providers.clients.offline import HELP_TEXT
from tests.web.accessibility import assert_accessible
from tests.web.browser import ROOT
from tests.web.browser import test_database_url as database_url_for_processes
from tests.web.test_browser import send, wait_for_reply
from tests.web.test_browser_stop import slow_worker  # noqa: F401  (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SERVER_READY_SECONDS = 60


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def web_server(port: int, broker_dir, log_path):
    """`manage.py runserver` on the test database, enqueuing into `broker_dir`."""
    environment = {
        **os.environ, "DJANGO_SETTINGS_MODULE": "tests.web.worker_settings",
        "DATABASE_URL": database_url_for_processes(),
        "CELERY_BROKER_URL": "filesystem://", "BROKER_DIR": str(broker_dir), "PYTHONPATH": str(ROOT),
    }
    environment.pop("REDIS_URL", None)
    command = [sys.executable, "manage.py", "runserver", "--noreload", "--insecure", f"127.0.0.1:{port}"]
    with log_path.open("a") as log:
        process = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_until_serving(process, port, log_path)
        yield process
    finally:
        process.terminate()
        process.wait(timeout=10)


def _wait_until_serving(process, port, log_path) -> None:
    deadline = time.monotonic() + SERVER_READY_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"runserver exited:\n{log_path.read_text()[-3000:]}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/login/", timeout=2)  # noqa: S310
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"runserver did not answer in {SERVER_READY_SECONDS} s:\n{log_path.read_text()[-3000:]}")


def wait_until(condition, seconds=30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.1)


def test_the_stream_reconnects_after_the_server_restarts_mid_reply(browser, owner, slow_worker, tmp_path):  # noqa: F811
    port = free_port()
    origin = f"http://localhost:{port}"  # the live server's host: the session cookie is per host, not port
    log = tmp_path / "runserver.log"
    page = browser.page(owner)
    with web_server(port, slow_worker, log):
        page.goto(f"{origin}/")
        assert page.url == f"{origin}/", (page.url, log.read_text()[-2000:])
        send(page, "hello")
        page.wait_for_function("() => (document.querySelector('.prose.is-streaming')?.textContent.length ?? 0) > 0")
    # The server is down; the worker goes on and ends the turn meanwhile.
    turn = Turn.objects.get()
    wait_until(lambda: Turn.objects.get(id=turn.id).status == Turn.Status.DONE)
    page.locator("[data-banner-text]", has_text="Reconnecting").wait_for()
    assert page.locator(".msg--assistant.is-live").count() == 1  # still "replying…" while it can't know
    assert_accessible(page, "the reconnecting banner")
    browser.shot(page, "chat-reconnecting")
    with web_server(port, slow_worker, log):
        wait_for_reply(page)  # no reload: the page found out by itself
        reply = page.locator(".msg--assistant").last.inner_text()
        assert reply.count("Hello! I am the offline demo model") == 1 and 'alice@example.com".' in reply
        assert page.locator("[data-banner]").is_hidden()
        assert page.get_by_role("button", name="Send").is_enabled()
    assert HELP_TEXT.endswith('alice@example.com".')


def test_a_second_tab_of_the_conversation_follows_a_turn_started_in_the_first(browser, owner):
    first = browser.page(owner)
    first.goto("/")
    send(first, "hello")
    wait_for_reply(first)
    second = first.context.new_page()
    second.on("pageerror", lambda error: browser.errors.append(str(error)))
    second.goto(first.url)
    assert second.locator(".msg--assistant").count() == 1

    send(first, "search my notes for budget")
    # The second tab learns of the turn and of its end, without a reload (it
    # may be over before the second tab shows it live: only the end is sure).
    second.wait_for_function("() => document.querySelectorAll('.msg--user').length === 2"
                             " && document.querySelectorAll('.msg--assistant').length === 2")
    wait_for_reply(second)
    assert second.locator(".msg--user").count() == 2 and second.locator(".msg--assistant").count() == 2
    assert "search my notes for budget" in second.locator(".msg--user").last.inner_text()
    wait_for_reply(first)
    assert_accessible(second, "a second tab that followed a turn")


def test_the_draft_is_kept_per_conversation_across_reloads_and_cleared_on_send(browser, owner):
    page = browser.page(owner)
    page.goto("/")
    send(page, "hello")
    wait_for_reply(page)
    composer = page.get_by_label("Message to the assistant")
    composer.fill("a draft for this conversation")
    page.reload()
    assert composer.input_value() == "a draft for this conversation"
    page.goto("/")
    assert composer.input_value() == ""  # another conversation (a new one): its own draft
    composer.fill("a draft for a new conversation")
    page.go_back()
    assert composer.input_value() == "a draft for this conversation"
    composer.press("Enter")
    wait_for_reply(page)
    page.reload()
    assert composer.input_value() == ""  # sent: the draft is gone
    page.goto("/")
    assert composer.input_value() == "a draft for a new conversation"
    assert_accessible(page, "a restored draft")

"""Stop, in real Chromium: while a reply streams (the Stop button) and while it
waits for a worker (Escape); credits checked in the database and on the page,
axe-core on each new state."""

import os
import shutil
from pathlib import Path

import pytest
from django.conf import settings

from assistant.models import Turn
from assistant.turn.outcome import CANCELLED_NOTICE
from assistant_engine.providers.clients.offline import HELP_TEXT
from conversations.models import Message
from credits.models import CreditAccount
from tests.web.accessibility import assert_accessible
from tests.web.browser import broker_folder, celery_worker
from tests.web.test_browser import send, wait_for_reply

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The help text in ~15 chunks, one every 0.4 s: several seconds to press Stop in.
SLOW_CHUNK_MS = "400"


@pytest.fixture(scope="module")
def slow_worker(django_db_setup, turn_worker):
    """A second worker whose offline model streams slowly, on its own broker folder."""
    folder = Path(settings.RUN_DIR) / f"browser-slow-broker-{os.getpid()}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    log = Path(settings.RUN_DIR) / f"browser-slow-worker-{os.getpid()}.log"
    saved = os.environ.get("BROWSER_TEST_CHUNK_DELAY_MS")
    os.environ["BROWSER_TEST_CHUNK_DELAY_MS"] = SLOW_CHUNK_MS
    try:
        worker = celery_worker(folder, log)
        worker.__enter__()
    finally:
        if saved is None:
            os.environ.pop("BROWSER_TEST_CHUNK_DELAY_MS", None)
        else:
            os.environ["BROWSER_TEST_CHUNK_DELAY_MS"] = saved
    yield folder
    worker.__exit__(None, None, None)
    shutil.rmtree(folder, ignore_errors=True)


def credits_held(organization) -> tuple[int, int]:
    account = CreditAccount.objects.get(organization=organization)
    return account.used_micros, account.reserved_micros


def test_stop_ends_a_streaming_reply_keeps_its_text_and_settles_its_credits(browser, owner, slow_worker):
    page = browser.page(owner)
    page.goto("/")
    with broker_folder(slow_worker):
        send(page, "hello")
        page.wait_for_function("() => (document.querySelector('.prose.is-streaming')?.textContent.length ?? 0) > 0")
        stop = page.get_by_role("button", name="Stop")
        assert stop.is_enabled()  # Send became Stop
        assert_accessible(page, "a streaming reply with its Stop button")
        browser.shot(page, "chat-stop-button")
        stop.click()
        wait_for_reply(page)

    turn = Turn.objects.get()
    assert turn.status == Turn.Status.CANCELLED and turn.finished_at
    stored = Message.objects.get(turn_id=turn.id, role="assistant")
    assert stored.content and HELP_TEXT.startswith(stored.content) and stored.content != HELP_TEXT  # text so far
    assert stored.notice == CANCELLED_NOTICE
    reply = page.locator(".msg--assistant").last
    assert reply.locator("[data-text]").first.inner_text().startswith("Hello!")
    assert CANCELLED_NOTICE in reply.inner_text()
    assert "alice@example.com" not in reply.inner_text()
    # The offline model is free: the reservation is released, nothing charged.
    assert credits_held(owner.organization) == (turn.cost_micros, 0) == (0, 0)
    assert page.locator("[data-credits-value]").inner_text() == "1000"
    assert page.get_by_role("button", name="Send").is_enabled()
    page.wait_for_function("() => document.querySelector('[data-announcer]').textContent === 'You stopped the reply.'")
    assert_accessible(page, "a stopped reply")
    browser.shot(page, "chat-stopped")


def test_a_queued_reply_says_it_waits_and_escape_stops_it_at_no_cost(browser, owner, tmp_path):
    page = browser.page(owner)
    page.goto("/")
    # No worker reads this folder: the turn stays queued.
    with broker_folder(tmp_path / "no-worker"):
        send(page, "hello")
        page.get_by_text("Waiting for the assistant to start…").wait_for()
        turn = Turn.objects.get()
        assert turn.status == Turn.Status.QUEUED and credits_held(owner.organization)[1] > 0
        assert page.get_by_role("button", name="Stop").is_enabled()
        assert_accessible(page, "a queued reply")
        browser.shot(page, "chat-queued")
        page.keyboard.press("Escape")
        wait_for_reply(page)

    turn.refresh_from_db()
    assert turn.status == Turn.Status.CANCELLED and turn.started_at is None
    assert credits_held(owner.organization) == (0, 0)
    assert CANCELLED_NOTICE in page.locator(".msg--assistant").last.inner_text()
    assert page.locator("[data-credits-value]").inner_text() == "1000"
    assert_accessible(page, "a reply stopped while queued")

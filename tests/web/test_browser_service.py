"""The service says when it is down, in real Chromium (issue 21): the session's
worker is frozen (SIGSTOP: it neither takes turns nor writes its heartbeat), a
message waits, the page says the service isn't answering and that the message
is kept; the worker thawed, the message runs and the reply arrives. axe-core on
the notice."""

import os
import signal

import pytest

from assistant.models import Turn, WorkerBeat
from assistant.service import SERVICE_DOWN_NOTICE
from tests.web.accessibility import assert_accessible
from tests.web.test_browser import send, wait_for_reply
from tests.workers import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_frozen_worker_is_said_on_the_page_and_the_message_runs_once_it_is_back(browser, owner, settings):
    settings.SERVICE_DOWN_SECONDS = 2  # the page asks after this long too (the chat's data attribute)
    worker_pid = int(wait_until(lambda: WorkerBeat.objects.first(), timeout=30).name.rsplit(":", 1)[1])
    page = browser.page(owner)
    page.goto("/")
    os.kill(worker_pid, signal.SIGSTOP)
    try:
        WorkerBeat.objects.all().delete()  # its last beat goes; frozen, it writes no new one
        send(page, "hello")
        notice = page.locator("[data-waiting]").get_by_text(SERVICE_DOWN_NOTICE)
        notice.wait_for(timeout=30_000)
        turn = Turn.objects.get()
        assert turn.status == Turn.Status.QUEUED
        assert owner.client.get(f"/api/turns/{turn.id}").json()["serviceDown"] is True
        page.wait_for_function("(text) => document.querySelector('[data-announcer]').textContent === text",
                               arg=SERVICE_DOWN_NOTICE)
        # Issue 34.7: nothing says "Replying…" while nothing replies: not the composer, the tab, the sidebar.
        assert "waits for the assistant service" in page.locator("[data-chat]").inner_text()
        assert "Replying" not in page.title()
        assert "Replying" not in page.locator(f'[data-conversation-item="{turn.thread_id}"]').inner_text()
        assert_accessible(page, "a message waiting for a service that is down")
        browser.shot(page, "chat-service-down")
    finally:
        os.kill(worker_pid, signal.SIGCONT)
    wait_for_reply(page)
    assert Turn.objects.get().status == Turn.Status.DONE
    assert notice.count() == 0
    assert page.locator(".msg--assistant").last.locator("[data-text]").first.inner_text()

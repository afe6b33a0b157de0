"""Fixtures of the browser UI's tests.

Plain page tests use Django's test client, logged in as the fixed cast of
tests/conftest.py. Browser tests (marked `browser`) drive Debian's Chromium with
Playwright against pytest-django's live server, with a real Celery worker
process running the turns: see browser.py.
"""

import os
import shutil
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from assistant.models import ActionCard, Turn
from conversations.models import Message, Thread, ToolCall


def web_client(person) -> Client:
    client = Client()
    client.force_login(person.user)
    return client


@pytest.fixture
def owner_web(owner) -> Client:
    return web_client(owner)


@pytest.fixture
def colleague_web(colleague) -> Client:
    return web_client(colleague)


@pytest.fixture
def outsider_web(outsider) -> Client:
    return web_client(outsider)


def make_conversation(person, *, title="Trip to Zurich", content="Plan my **trip**", reply="Here is the plan.",
                      status=Thread.Status.IDLE, moment=None):
    """A thread with one user message and one assistant reply that called a tool."""
    moment = moment or timezone.now()
    thread = Thread.objects.create(
        organization=person.organization, user=person.user, title=title, created_at=moment, updated_at=moment,
        last_activity_at=moment, status=status, next_seq=2,  # as the write paths keep it: two messages below
    )
    turn = Turn.objects.create(
        thread=thread, organization=person.organization, user=person.user, model_option="offline",
        status=Turn.Status.DONE,
    )
    Message.objects.create(thread=thread, seq=0, role="user", content=content, created_at=moment, turn_id=turn.id)
    reply_message = Message.objects.create(
        thread=thread, seq=1, role="assistant", content=reply, created_at=moment, turn_id=turn.id,
    )
    ToolCall.objects.create(
        message=reply_message, position=0, tool_use_id="toolu_1", name="search_notes", input={"query": "zurich"},
        result={"notes": [{"id": 1, "title": "Zurich trip"}]}, created_at=moment, finished_at=moment,
    )
    return thread


def make_card(person, thread, *, status=ActionCard.Status.PENDING, warning=False, description="Delete the note “A”",
              tool_name="delete_note", tool_input=None):
    call = ToolCall.objects.filter(message__thread=thread).first()
    return ActionCard.objects.create(
        organization=person.organization, user=person.user, thread=thread, tool_call=call, tool_name=tool_name,
        tool_input=tool_input or {"note_id": 1}, description=description, snapshot_hash="a" * 64,
        trifecta_warning=warning, status=status, expires_at=timezone.now() + timedelta(hours=24),
    )


# --- Browser tests ---------------------------------------------------------------

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


@pytest.fixture(scope="session")
def turn_worker(django_db_setup, request):
    """A real Celery worker on the test database, for the whole session, and
    its broker folder (this run's own: no other worker takes its turns). The
    worker's log stays in .run/ when a test fails."""
    from tests.web.browser import celery_worker

    folder = Path(settings.RUN_DIR) / f"browser-broker-{os.getpid()}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    log = Path(settings.RUN_DIR) / f"browser-worker-{os.getpid()}.log"
    with celery_worker(folder, log):
        yield folder
    shutil.rmtree(folder, ignore_errors=True)
    if not request.session.testsfailed:
        log.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def chromium():
    from playwright.sync_api import sync_playwright

    from tests.web.browser import CHROMIUM, CHROMIUM_ARGS

    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium is not installed at {CHROMIUM} (make test installs Debian's chromium).")
    # Playwright's sync API keeps an event loop in this thread; the test code
    # (fixtures, assertions on the database) is plain synchronous code.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield browser
            browser.close()
    finally:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


class Browser:
    """Pages of one test, logged in as one person, with their screenshots."""

    def __init__(self, chromium, live_server, tmp_path):
        self.chromium = chromium
        self.url = live_server.url
        self.tmp_path = tmp_path
        self.contexts = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []

    def page(self, person=None, *, width=1280, height=820, locale=None):
        # `locale`: the browser's language (its Accept-Language), e.g. "de-CH".
        options = {"locale": locale} if locale else {}
        context = self.chromium.new_context(viewport={"width": width, "height": height}, base_url=self.url, **options)
        self.contexts.append(context)
        if person is not None:
            client = web_client(person)
            context.add_cookies([{
                "name": settings.SESSION_COOKIE_NAME, "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                "url": self.url,
            }])
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))
        return page

    def shot(self, page, name: str, *, full_page=False) -> None:
        """Every run takes it; UPDATE_SCREENSHOTS=1 keeps it under docs/screenshots."""
        path = self.tmp_path / f"{name}.png"
        page.screenshot(path=str(path), full_page=full_page, animations="disabled", caret="hide")
        if os.environ.get("UPDATE_SCREENSHOTS") == "1":
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, SCREENSHOTS / f"{name}.png")

    def close(self):
        for context in self.contexts:
            context.close()


@pytest.fixture
def browser(chromium, live_server, turn_worker, tmp_path):
    from tests.web.browser import broker_folder

    session = Browser(chromium, live_server, tmp_path)
    with broker_folder(turn_worker):
        yield session
        session.close()
    assert session.errors == [], f"JavaScript errors in the page: {session.errors}"

"""The engine included at a prefix (tests/web/prefixed_urls.py: the demo under
/helper/, and a product page of its own at /shop/ holding only the panel tag),
in real Chromium with a real worker running the offline model: a turn in the
chat page, in the panel of a note page and in the panel of the bare product
page, each with a card confirmed, and every request the page makes goes under
/helper/ or /static/, none to /api/ at the site's root."""

from urllib.parse import urlsplit

import pytest
from django.test import override_settings

from conversations.models import MessageFeedback, Thread
from tests.web.accessibility import assert_accessible
from tests.web.test_csp_browser import RECORD_VIOLATIONS
from workspace.management.commands.seed_demo_workspace import seed
from workspace.models import Note

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NOTE = "Ideas for the team offsite"
EMAIL = "email Lunch at noon? to marie.keller@example.com"


@pytest.fixture
def workspace(owner):
    seed(owner.member)
    with override_settings(ROOT_URLCONF="tests.web.prefixed_urls"):
        yield owner


def recorded(page) -> list[str]:
    """The path of every request the page makes from now on (documents, scripts, fetches, the events stream)."""
    paths = []
    page.on("request", lambda request: paths.append(urlsplit(request.url).path)
            if request.url.startswith("http") else None)
    return paths


def strays(paths: list[str], *allowed: str) -> list[str]:
    assert any(path.startswith("/helper/api/") for path in paths)  # the page did talk to the API
    return [path for path in paths if not path.startswith(("/helper/", "/static/", *allowed))]


def send(scope, text):
    composer = scope.get_by_label("Message to the assistant")
    composer.fill(text)
    composer.press("Enter")


def wait_for_reply(page, chat="[data-chat]"):
    page.wait_for_function(f"() => {{ const chat = document.querySelector('{chat}');"
                           " return chat && !chat.classList.contains('is-busy')"
                           " && !chat.querySelector('.msg--assistant.is-live'); }")


def confirm_the_card(page, scope):
    card = scope.locator(".card--pending")
    card.wait_for()
    card.get_by_role("button", name="Confirm").click()
    scope.locator(".card--confirmed").wait_for()


def test_the_chat_page_under_the_prefix(browser, workspace, tmp_path):
    page = browser.page(workspace)
    page.add_init_script(RECORD_VIOLATIONS)
    paths = recorded(page)
    page.goto("/helper/")
    notes = tmp_path / "agenda.md"
    notes.write_text("# Agenda\n\nLunch at noon.\n")
    page.locator("[data-file-input]").set_input_files(str(notes))  # POST /helper/api/files
    page.get_by_role("list", name="Files to send").get_by_text("agenda.md").wait_for()
    send(page, f"delete the note {NOTE}")
    page.locator(".card--pending").wait_for()
    wait_for_reply(page)
    thread = Thread.objects.get()
    assert page.url.endswith(f"/helper/c/{thread.id}/")  # history.replaceState, under the prefix
    confirm_the_card(page, page)
    assert not Note.objects.filter(title=NOTE).exists()
    assert "agenda.md" in page.locator(".msg--user").get_by_role("list", name="Attached files").inner_text()

    page.get_by_role("button", name="Good reply").last.click()  # POST /helper/api/messages/…/feedback
    page.locator("[data-feedback-word]").last.wait_for()
    assert MessageFeedback.objects.get().rating == "up"
    title = page.locator(".conv.is-current .conv__title").inner_text()
    page.get_by_role("button", name=f"Rename “{title}”").click()  # PATCH /helper/api/conversations/…
    page.get_by_label("New title (Enter to save, Escape to cancel)").fill("Offsite clean-up")
    page.keyboard.press("Enter")
    page.locator(".conv.is-current .conv__title", has_text="Offsite clean-up").wait_for()
    page.reload()  # the conversation's own page, under the prefix
    assert page.locator(".card--confirmed").is_visible()
    page.get_by_role("button", name="Delete “Offsite clean-up”").click()  # DELETE, then back to the chat's root
    page.locator("[data-delete-dialog]").get_by_role("button", name="Delete").click()
    page.wait_for_url(f"{browser.url}/helper/")
    assert not Thread.objects.exists()
    assert page.evaluate("window.__violations") == []
    assert strays(paths) == []
    assert {"/helper/api/chat", "/helper/api/files", "/helper/api/credits", "/helper/jsi18n/"} <= set(paths)
    assert any(path.startswith("/helper/api/turns/") and path.endswith("/events") for path in paths)
    assert any(path.startswith("/helper/cards/") for path in paths)  # the card's fragment after Confirm


def test_the_panel_of_a_note_page_under_the_prefix(browser, workspace):
    note = Note.objects.get(title=NOTE)
    page = browser.page(workspace)
    paths = recorded(page)
    page.goto(f"/helper/notes/{note.id}/")
    page.get_by_role("button", name="Assistant", exact=True).click()
    panel = page.get_by_role("complementary", name="Assistant")
    send(panel, EMAIL)
    confirm_the_card(page, panel)
    wait_for_reply(page, "[data-assistant-panel] [data-chat]")
    thread = Thread.objects.get()
    assert panel.get_by_role("link", name="Open in the chat page").get_attribute("href") == f"/helper/c/{thread.id}/"
    assert page.url.endswith(f"/helper/notes/{note.id}/")  # the panel never moves the host page
    panel.get_by_role("button", name="New conversation").click()  # the panel's state and fragment
    panel.locator("[data-messages]").get_by_text("Lunch at noon?").wait_for(state="detached")
    assert panel.get_by_role("link", name="Open in the chat page").get_attribute("href") == "/helper/"
    assert strays(paths) == []
    assert {"/helper/assistant/panel/state", "/helper/assistant/panel/chat"} <= set(paths)


def test_the_panel_tag_alone_on_the_products_own_page(browser, workspace):
    page = browser.page(workspace)
    page.add_init_script(RECORD_VIOLATIONS)
    paths = recorded(page)
    page.goto("/shop/")
    assert page.get_by_role("heading", name="Your orders").is_visible()
    assert_accessible(page, "a product's bare page with the panel tag, closed")
    page.get_by_role("button", name="Assistant", exact=True).click()
    panel = page.get_by_role("complementary", name="Assistant")
    assert panel.is_visible()
    assert page.evaluate("document.activeElement.id") == "panel-composer-input"
    send(panel, f"delete the note {NOTE}")
    panel.locator(".card--pending").wait_for()
    wait_for_reply(page, "[data-assistant-panel] [data-chat]")
    assert_accessible(page, "the panel alone with a pending card")
    confirm_the_card(page, panel)
    assert not Note.objects.filter(title=NOTE).exists()
    assert "Ideas for the team offsite" in panel.locator("[data-messages]").inner_text()
    assert page.evaluate("typeof window.katex") == "object"  # KaTeX came with the tag
    assert_accessible(page, "the panel alone after the card was confirmed")
    browser.shot(page, "panel-tag-alone")
    page.reload()
    assert page.get_by_role("complementary", name="Assistant").is_visible()  # its state kept by the server
    assert page.evaluate("window.__violations") == []
    assert strays(paths, "/shop/") == []

"""The assistant panel beside the host product's pages (issue 24), in real
Chromium with a real worker running the offline model: delete a note from the
panel, the list follows without a reload; the same conversation on the next
page and after a reload; a full-height sheet at 375 px; axe on each state."""

import pytest

from conversations.models import Thread
from credits.models import LedgerEntry
from tests.web.accessibility import assert_accessible
from tests.web.test_csp_browser import RECORD_VIOLATIONS
from workspace.management.commands.seed_demo_workspace import seed
from workspace.models import Note

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NOTE = "Ideas for the team offsite"
NO_SIDEWAYS_SCROLL = "document.documentElement.scrollWidth <= document.documentElement.clientWidth"


@pytest.fixture
def workspace(owner):
    seed(owner.member)
    return owner


def panel_of(page):
    return page.get_by_role("complementary", name="Assistant")


def ask(panel, text):
    composer = panel.get_by_label("Message to the assistant")
    composer.fill(text)
    composer.press("Enter")


def wait_for_reply(page):
    page.wait_for_function("() => { const chat = document.querySelector('[data-assistant-panel] [data-chat]');"
                           " return chat && !chat.classList.contains('is-busy')"
                           " && !chat.querySelector('.msg--assistant.is-live'); }")


def test_delete_a_note_from_the_panel_then_keep_the_conversation_across_pages(browser, workspace):
    page = browser.page(workspace)
    page.add_init_script(RECORD_VIOLATIONS)  # the site's strict CSP (nonces) holds on host pages too
    page.goto("/notes/")
    note = Note.objects.get(title=NOTE)
    assert page.locator(f'[data-note-id="{note.id}"]').is_visible()
    assert not panel_of(page).is_visible()
    assert_accessible(page, "the notes page, panel closed")

    page.get_by_role("button", name="Assistant", exact=True).click()
    panel = panel_of(page)
    assert panel.is_visible()
    assert page.evaluate("document.activeElement.id") == "panel-composer-input"
    assert_accessible(page, "the notes page, panel open")

    page.evaluate("window.__notReloaded = true")
    ask(panel, f"delete the note {NOTE}")
    card = panel.locator("[data-card-id]")
    card.wait_for()
    wait_for_reply(page)
    assert_accessible(page, "the panel with a pending card")
    credits_left = page.locator("[data-credits] [data-credits-value]").inner_text()
    assert panel.locator("[data-credits-value]").inner_text() == credits_left  # the panel says the credits too
    effects = page.evaluate_handle("""() => { const seen = [];
      document.addEventListener('assistant:effect', (event) => seen.push(event.detail)); return seen; }""")
    card.get_by_role("button", name="Confirm").click()
    page.locator(f'[data-note-id="{note.id}"]').wait_for(state="detached")
    assert page.evaluate("window.__notReloaded") is True  # the list changed in place
    assert not Note.objects.filter(id=note.id).exists()
    assert effects.evaluate("(seen) => seen.map((d) => [d.tool, d.object.id])") == [["delete_note", note.id]]
    assert panel.locator(".card--confirmed").is_visible()
    assert_accessible(page, "the notes page after the card was confirmed")

    thread = Thread.objects.get()
    page.get_by_role("link", name="Inbox").click()
    page.wait_for_url("**/inbox/")
    panel = panel_of(page)
    assert panel.is_visible()  # still open
    assert f"delete the note {NOTE}" in panel.locator("[data-messages]").inner_text()
    assert panel.locator("assistant-chat").get_attribute("data-conversation-id") == str(thread.id)
    assert_accessible(page, "the inbox with the panel open")

    panel.get_by_label("Message to the assistant").fill("a draft kept across a reload")
    page.reload()
    panel = panel_of(page)
    assert panel.is_visible()
    assert f"delete the note {NOTE}" in panel.locator("[data-messages]").inner_text()
    assert panel.get_by_label("Message to the assistant").input_value() == "a draft kept across a reload"
    assert Thread.objects.count() == 1 and thread.messages.filter(role="user").count() == 1  # nothing sent twice
    assert page.evaluate("window.__violations") == []

    panel.get_by_role("button", name="New conversation").click()
    panel.locator("[data-welcome]").wait_for()
    assert panel.locator("assistant-chat").get_attribute("data-conversation-id") == ""
    assert page.evaluate("document.activeElement.id") == "panel-composer-input"
    page.reload()
    assert panel_of(page).locator("[data-welcome]").is_visible()  # the new conversation is the current one
    assert Thread.objects.count() == 1  # nothing created until the first message

    with page.expect_response("**/assistant/panel/state"):  # saved before the reload asks for the page
        panel.get_by_role("button", name="Close the assistant").click()
    assert not panel.is_visible()
    page.reload()
    assert not panel_of(page).is_visible()  # closed stays closed


def test_at_375_px_the_panel_is_a_full_height_sheet_without_sideways_scroll(browser, workspace):
    page = browser.page(workspace, width=375, height=812)
    page.goto("/notes/")
    assert page.evaluate(NO_SIDEWAYS_SCROLL)
    assert_accessible(page, "the notes page at 375 px")
    page.get_by_role("button", name="Assistant", exact=True).click()
    box = panel_of(page).bounding_box()
    assert (box["x"], box["y"], box["width"], box["height"]) == (0, 0, 375, 812)
    assert page.evaluate(NO_SIDEWAYS_SCROLL)
    assert page.evaluate("document.querySelector('.product__main').inert") is True  # the page behind
    assert_accessible(page, "the panel as a sheet at 375 px")
    browser.shot(page, "panel-375")
    page.get_by_role("button", name="Close the assistant").click()
    assert page.evaluate("document.querySelector('.product__main').inert") is False


def on_the_notes_page_with_the_panel(browser, workspace):
    """The note's own page, the panel open beside it: (the note, the page, the panel)."""
    note = Note.objects.get(title=NOTE)
    page = browser.page(workspace)
    page.goto(f"/notes/{note.id}/")
    page.get_by_role("button", name="Assistant", exact=True).click()
    return note, page, panel_of(page)


def test_summarize_the_open_note_with_the_offline_model(browser, workspace):
    note, page, panel = on_the_notes_page_with_the_panel(browser, workspace)
    assert NOTE in panel.locator("[data-panel-context]").inner_text()
    ask(panel, "summarize this note")
    wait_for_reply(page)
    reply = panel.locator(".msg--assistant").last.inner_text()
    assert f'The note "{NOTE}" says:' in reply
    assert note.body.split()[0] in reply
    # The organization's spend counts it under the panel (issue 35.1: the component says so).
    assert list(LedgerEntry.objects.filter(kind="reserve").values_list("door", flat=True)) == ["panel"]
    browser.shot(page, "panel-summarize")
    assert_accessible(page, "a note page with the panel's summary")


def test_after_deleting_the_open_note_the_panel_still_takes_every_message(browser, workspace):
    """Issue 34.1: the page kept sending the deleted note as context and every message was refused."""
    note, page, panel = on_the_notes_page_with_the_panel(browser, workspace)
    ask(panel, f"delete the note {NOTE}")
    panel.locator("[data-card-id]").wait_for()
    wait_for_reply(page)
    panel.locator("[data-card-id]").get_by_role("button", name="Confirm").click()
    panel.locator(".card--confirmed").wait_for()
    assert not Note.objects.filter(id=note.id).exists()

    ask(panel, "search my notes for budget")
    wait_for_reply(page)
    banner = panel.locator("[data-banner]")
    assert banner.is_visible() and "no longer exists" in banner.inner_text()  # said once, when it was dropped
    assert not page.locator("[data-panel-context]").count()
    assert_accessible(page, "the panel after the open note was deleted")
    ask(panel, "search my notes for trip")  # the context is no longer sent at all
    wait_for_reply(page)
    assert "No such object among yours" not in panel.inner_text()
    assert Thread.objects.get().messages.filter(role="user").count() == 3  # every message taken

    page.reload()
    assert page.get_by_role("heading", name="Not found").is_visible()  # the product's own page
    assert_accessible(page, "a deleted note's page")


def test_a_note_the_assistant_creates_shows_in_the_list_without_a_reload(browser, workspace):
    """Issue 34.2: a write tool that ran (no card) changes the page beside the panel too."""
    page = browser.page(workspace)
    page.goto("/notes/")
    page.evaluate("window.__notReloaded = true")
    page.get_by_role("button", name="Assistant", exact=True).click()
    ask(panel_of(page), "create a note titled Offsite menu: soup and bread")
    wait_for_reply(page)
    note = Note.objects.get(title="Offsite menu")
    page.locator(f'[data-note-id="{note.id}"]').wait_for()
    assert page.evaluate("window.__notReloaded") is True
    assert_accessible(page, "the notes list after the assistant created a note")

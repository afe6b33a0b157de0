"""Knowing when a reply is done, in real Chromium: the tab's title while a
reply runs and its mark when it ends unseen, the opt-in notification (asked
only on a click, the conversation's title and no content), the keyboard
shortcuts and their sheet (by `?` or from the account menu); axe-core on each
new state, light and dark."""

import pytest

from tests.web.accessibility import assert_accessible, open_account_menu
from tests.web.test_browser import send, wait_for_reply, workspace  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The page believes it is hidden while window.__hidden is true: Chromium keeps a
# headless tab visible, so the visibility is overridden before the app's scripts run.
VISIBILITY = """
window.__hidden = false;
Object.defineProperty(Document.prototype, 'visibilityState', {
  configurable: true, get() { return window.__hidden ? 'hidden' : 'visible'; } });
Object.defineProperty(Document.prototype, 'hidden', { configurable: true, get() { return window.__hidden; } });
window.__setHidden = (hidden) => { window.__hidden = hidden; document.dispatchEvent(new Event('visibilitychange')); };
"""
# Every notification the page makes, and every permission request, recorded (the real ones still run).
NOTIFICATIONS = """
window.__notes = []; window.__asked = 0;
const RealNotification = window.Notification;
window.Notification = class extends RealNotification {
  constructor(title, options) {
    window.__notes.push({ title, body: options?.body ?? '', tag: options?.tag ?? '' });
    super(title, options);
    window.__lastNote = this;
  }
  static requestPermission() { window.__asked += 1; return RealNotification.requestPermission(); }
};
"""
TITLE = "document.title"


def hidden_page(browser, person, **options):
    page = browser.page(person, **options)
    page.add_init_script(VISIBILITY)
    page.add_init_script(NOTIFICATIONS)
    return page


def test_the_title_says_a_reply_runs_and_marks_it_when_it_ends_unseen(browser, owner):
    page = hidden_page(browser, owner)
    page.goto("/")
    send(page, "hello")
    page.wait_for_function("() => document.title === 'Replying… — hello · Assistant'")
    wait_for_reply(page)
    assert page.evaluate(TITLE) == "hello · Assistant"  # seen as it ended: no mark

    page.evaluate("window.__setHidden(true)")
    send(page, "hello again")
    page.wait_for_function("() => document.title.startsWith('Replying… — ')")
    wait_for_reply(page)
    assert page.evaluate(TITLE) == "● Reply ready — hello · Assistant"
    page.evaluate("window.__setHidden(false)")  # the person comes back to the tab
    assert page.evaluate(TITLE) == "hello · Assistant"
    assert page.evaluate("window.__notes") == []  # not asked for: no notification
    assert page.evaluate("window.__asked") == 0


def test_a_notification_when_a_card_waits_in_a_hidden_tab(browser, workspace):  # noqa: F811
    page = hidden_page(browser, workspace)
    page.context.grant_permissions(["notifications"], origin=browser.url)
    page.goto("/")
    assert page.evaluate("window.__asked") == 0  # nothing asked on load
    open_account_menu(page)
    toggle = page.get_by_role("button", name="Notifications")
    assert toggle.get_attribute("aria-pressed") == "false"
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "true"
    status = page.locator("[data-notify-status]")
    assert "never the conversation's title or what was said" in status.inner_text()
    assert_accessible(page, "notifications turned on")

    page.evaluate("window.__setHidden(true)")
    send(page, "email Lunch at noon? to marie.keller@example.com")
    page.locator(".card--pending").wait_for()
    wait_for_reply(page)
    notes = page.evaluate("window.__notes")
    assert notes == [{"title": "Assistant", "body": "A card waits for your confirmation.",
                      "tag": f"assistant-{page.locator('[data-chat]').get_attribute('data-conversation-id')}"}]
    assert "marie" not in notes[0]["body"] and "Lunch" not in notes[0]["body"]  # no content
    assert page.evaluate(TITLE).startswith("● Waiting for your confirmation — ")

    page.locator("[data-new-conversation]").focus()
    page.evaluate("window.__lastNote.onclick()")  # the person clicks the notification
    assert page.evaluate("document.activeElement.id") == "composer-input"

    page.evaluate("window.__setHidden(false)")
    toggle.click()  # off again: the next reply in a hidden tab makes none
    assert toggle.get_attribute("aria-pressed") == "false"
    page.evaluate("window.__setHidden(true)")
    send(page, "hello")
    wait_for_reply(page)
    assert len(page.evaluate("window.__notes")) == 1


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_blocked_permission_is_said_and_asked_only_on_the_click(browser, owner, scheme):
    page = hidden_page(browser, owner)  # no permission granted: the browser refuses it
    page.emulate_media(color_scheme=scheme, reduced_motion="reduce")
    page.goto("/")
    open_account_menu(page)
    page.get_by_role("button", name="Notifications").click()
    page.locator("[data-notify-status]").filter(has_text="Your browser blocks notifications").wait_for()
    assert page.evaluate("window.__asked") == 1
    assert page.get_by_role("button", name="Notifications").get_attribute("aria-pressed") == "false"
    assert_accessible(page, f"notifications blocked ({scheme})")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_shortcuts_and_their_sheet(browser, owner, scheme):
    from tests.web.conftest import make_conversation

    thread = make_conversation(owner)
    page = browser.page(owner)
    page.emulate_media(color_scheme=scheme, reduced_motion="reduce")
    page.goto(f"/c/{thread.id}/")
    composer = page.get_by_label("Message to the assistant")
    composer.press_sequentially("what?")  # typing: `?` is a character
    assert composer.input_value() == "what?" and page.get_by_role("dialog").count() == 0

    page.locator("[data-new-conversation]").focus()
    page.keyboard.press("?")
    sheet = page.get_by_role("dialog", name="Keyboard shortcuts")
    assert sheet.is_visible()
    assert "Ctrl + Shift + O" in sheet.get_by_role("row", name="New conversation").inner_text()
    assert_accessible(page, f"the shortcuts sheet ({scheme})")
    browser.shot(page, f"shortcuts-{scheme}")
    for _ in range(4):  # focus stays in the sheet
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.closest('dialog[open]') !== null")
    page.keyboard.press("Escape")
    # Closed, and focus back on what opened it: the dialog's `close` event comes a task later, and a
    # Ctrl+K pressed before it had its focus taken back (a CI run under load).
    page.wait_for_function("() => !document.querySelector('dialog[open]')"
                           " && document.activeElement.matches('[data-new-conversation]')")
    assert not sheet.is_visible()

    page.keyboard.press("Control+k")
    page.wait_for_function("() => document.activeElement.id === 'conversation-search'")
    page.keyboard.press("Shift+Escape")
    page.wait_for_function("() => document.activeElement.id === 'composer-input'")
    page.keyboard.press("Control+Shift+O")
    page.wait_for_url(f"{browser.url}/")
    assert page.locator("[data-welcome]").is_visible()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_sheet_opens_from_the_account_menu_and_gives_focus_back(browser, owner, scheme):
    page = browser.page(owner)
    page.emulate_media(color_scheme=scheme, reduced_motion="reduce")
    page.goto("/")
    open_account_menu(page)
    control = page.get_by_role("navigation", name="Account").get_by_role("button", name="Keyboard shortcuts")
    assert control.get_attribute("aria-haspopup") == "dialog"
    control.click()
    sheet = page.get_by_role("dialog", name="Keyboard shortcuts")
    assert sheet.is_visible()
    assert page.evaluate("document.activeElement.closest('dialog[open]') !== null")
    assert_accessible(page, f"the shortcuts sheet opened from the account menu ({scheme})")
    page.keyboard.press("Escape")
    assert not sheet.is_visible()
    assert control.evaluate("node => node === document.activeElement")
    page.keyboard.press("Enter")  # reached by keyboard: Enter on it opens the sheet again
    assert sheet.is_visible()
    sheet.get_by_role("button", name="Close").click()
    assert not sheet.is_visible() and control.evaluate("node => node === document.activeElement")


def test_the_sheet_opens_from_the_account_menu_on_a_narrow_screen(browser, owner):
    page = browser.page(owner, width=375, height=812)
    page.goto("/")
    page.get_by_role("button", name="Account menu").click()
    control = page.get_by_role("button", name="Keyboard shortcuts")
    control.focus()
    page.keyboard.press("Enter")
    sheet = page.get_by_role("dialog", name="Keyboard shortcuts")
    assert sheet.is_visible()
    assert_accessible(page, "the shortcuts sheet on a narrow screen")
    page.keyboard.press("Escape")  # the sheet closes, back into the menu, which stays open
    assert not sheet.is_visible() and control.is_visible()
    assert control.evaluate("node => node === document.activeElement")
    assert page.get_by_role("button", name="Account menu").get_attribute("aria-expanded") == "true"


def test_search_by_shortcut_opens_the_drawer_on_a_narrow_screen(browser, owner):
    page = browser.page(owner, width=375, height=812)
    page.goto("/")
    page.keyboard.press("Control+k")
    assert page.get_by_role("button", name="Conversations", exact=True).get_attribute("aria-expanded") == "true"
    assert page.evaluate("document.activeElement.id") == "conversation-search"


def test_the_panel_of_a_host_page_notifies_but_leaves_the_title_and_keys_to_the_page(browser, owner):
    from tests.web.test_browser_panel import ask, panel_of
    from tests.web.test_browser_panel import wait_for_reply as wait_for_panel_reply

    page = hidden_page(browser, owner)
    page.context.grant_permissions(["notifications"], origin=browser.url)
    page.goto("/notes/")
    page.keyboard.press("?")
    page.keyboard.press("Control+k")
    assert page.get_by_role("dialog").count() == 0  # the page's keys stay the page's
    assert page.locator("[data-shortcuts-open]").count() == 0  # nor a way to a sheet of keys it lacks
    assert page.evaluate("document.activeElement === document.body")
    host_title = page.evaluate(TITLE)
    open_account_menu(page)
    page.get_by_role("button", name="Notifications").click()
    page.get_by_role("button", name="Assistant", exact=True).click()
    page.evaluate("window.__setHidden(true)")
    ask(panel_of(page), "hello")
    wait_for_panel_reply(page)
    assert page.evaluate(TITLE) == host_title  # the host page's title is its own
    assert [note["body"] for note in page.evaluate("window.__notes")] == ["The reply is ready."]
    assert page.evaluate("window.__notes")[0]["title"] == "Assistant"  # never the conversation's title
    page.evaluate("window.__lastNote.onclick()")
    assert page.evaluate("document.activeElement.id") == "panel-composer-input"

"""The dark theme in real Chromium: it follows prefers-color-scheme, the toggle
overrides it and is kept; axe-core (colour contrast included) in dark on the
states of the chat."""

import pytest

from assistant.models import ActionCard
from conversations.models import Message
from tests.web.accessibility import assert_accessible, open_account_menu
from tests.web.conftest import make_card, make_conversation
from tests.web.test_browser_content import REPLY

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BACKGROUND = "getComputedStyle(document.body).backgroundColor"


def test_dark_follows_the_system_and_passes_axe(browser, owner):
    thread = make_conversation(owner, reply=REPLY)
    make_card(owner, thread)
    make_card(owner, thread, status=ActionCard.Status.CONFIRMED, description="Send the mail")
    Message.objects.filter(thread=thread, role="assistant").update(notice="This reply stopped at a limit.")
    page = browser.page(owner)
    page.emulate_media(color_scheme="dark")
    page.goto(f"/c/{thread.id}/")
    assert page.evaluate(BACKGROUND) == "rgb(17, 23, 21)"
    toggle = page.locator("[data-theme-toggle]")  # in the account menu, closed
    assert toggle.get_attribute("aria-pressed") == "true"
    assert_accessible(page, "a conversation in dark")
    browser.shot(page, "dark-conversation")
    page.locator("[data-credits]").click()
    page.get_by_role("searchbox", name="Search your conversations").fill("trip")
    page.locator(".conv__title mark").first.wait_for()
    assert_accessible(page, "search and credits in dark")
    page.goto("/")
    assert_accessible(page, "a new conversation in dark")


def test_the_toggle_overrides_the_system_and_is_kept(browser, owner):
    page = browser.page(owner)
    # No colour transition under axe: the buttons fade into the chosen theme, and axe
    # measuring mid-fade found a contrast that no settled page has.
    page.emulate_media(color_scheme="light", reduced_motion="reduce")
    page.goto("/")
    assert page.evaluate(BACKGROUND) == "rgb(244, 245, 243)"
    open_account_menu(page)
    toggle = page.get_by_role("button", name="Dark theme")
    assert toggle.get_attribute("aria-pressed") == "false"
    toggle.click()
    assert page.evaluate(BACKGROUND) == "rgb(17, 23, 21)" and toggle.get_attribute("aria-pressed") == "true"
    page.reload()
    assert page.evaluate(BACKGROUND) == "rgb(17, 23, 21)"
    assert_accessible(page, "dark chosen with the toggle")
    open_account_menu(page)
    page.get_by_role("button", name="Dark theme").click()
    assert page.evaluate(BACKGROUND) == "rgb(244, 245, 243)"

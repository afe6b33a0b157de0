"""Keyboard and screen readers, in real Chromium: focus on load and by
shortcut, never stolen when a turn ends, the finished reply announced, the
stream marked busy, per-message headings, the credits breakdown as a
disclosure, a card's outcome announced; axe-core on each state."""

import pytest

from assistant.models import ActionCard
from tests.web.accessibility import assert_accessible
from tests.web.conftest import make_card, make_conversation
from tests.web.test_browser import send, wait_for_reply

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FOCUSED = "document.activeElement.id || document.activeElement.dataset.newConversation"
ANNOUNCER = "document.querySelector('[data-announcer]').textContent"


def test_the_composer_has_focus_on_load_and_by_shortcut(browser, owner):
    thread = make_conversation(owner)
    page = browser.page(owner)
    page.goto("/")
    assert page.evaluate(FOCUSED) == "composer-input"
    page.goto(f"/c/{thread.id}/")  # switching conversations is a page load
    assert page.evaluate(FOCUSED) == "composer-input"

    page.locator("[data-new-conversation]").focus()
    page.keyboard.press("/")
    assert page.evaluate(FOCUSED) == "composer-input"
    assert page.get_by_label("Message to the assistant").input_value() == ""  # the `/` was not typed
    page.locator("[data-new-conversation]").focus()
    page.keyboard.press("Shift+Escape")  # Ctrl+K is the search's (test_browser_attention.py)
    assert page.evaluate(FOCUSED) == "composer-input"
    page.keyboard.type("a/b")  # in the composer, `/` is just a character
    assert page.get_by_label("Message to the assistant").input_value() == "a/b"


def test_focus_stays_put_when_a_turn_ends_and_the_reply_is_announced(browser, owner):
    page = browser.page(owner)
    page.goto("/")
    send(page, "hello")
    live = page.locator(".msg--assistant.is-live")
    live.wait_for()
    assert live.get_attribute("aria-busy") == "true"
    page.locator("[data-new-conversation]").focus()  # the person moved on meanwhile
    wait_for_reply(page)
    assert page.evaluate(FOCUSED) == ""  # still the "New conversation" link: focus not stolen
    assert page.locator("[data-new-conversation]").evaluate("node => node === document.activeElement")
    page.wait_for_function(f"() => {ANNOUNCER}.startsWith('The assistant replied: ')")
    assert page.evaluate(ANNOUNCER) == ("The assistant replied: Hello! I am the offline demo model: I run on this "
                                        "machine without any network, so I only understand a few plain requests.")
    assert page.locator("[aria-busy]").count() == 0
    assert page.get_by_role("heading", name="You said").count() == 1
    assert page.get_by_role("heading", name="The assistant replied").count() == 1
    assert_accessible(page, "a finished reply")


def test_the_credits_breakdown_is_a_disclosure(browser, owner):
    page = browser.page(owner)
    page.goto("/")
    pill = page.get_by_role("button", name="1000 credits left")
    assert pill.get_attribute("aria-expanded") == "false"
    assert page.locator("[data-credits-details]").is_hidden()
    pill.focus()
    page.keyboard.press("Enter")
    details = page.locator("#credits-details")
    assert details.is_visible() and pill.get_attribute("aria-expanded") == "true"
    assert "0 used, 0 reserved of 1000 this month" in details.inner_text()
    assert_accessible(page, "the credits breakdown open")
    browser.shot(page, "credits-breakdown")
    page.keyboard.press("Escape")
    assert details.is_hidden() and pill.get_attribute("aria-expanded") == "false"


def test_a_cards_outcome_is_announced(browser, owner):
    thread = make_conversation(owner)
    card = make_card(owner, thread)
    page = browser.page(owner)
    page.goto(f"/c/{thread.id}/")
    page.get_by_role("button", name="Cancel").click()
    page.wait_for_function(f"() => {ANNOUNCER} === 'Card cancelled. You cancelled it; nothing was done.'")
    card.refresh_from_db()
    assert card.status == ActionCard.Status.CANCELLED
    assert_accessible(page, "a cancelled card")

"""Regenerate and edit in real Chromium: new turns, the old versions kept and
paged one at a time ("‹ 2 / 3 ›"), by mouse and keyboard, across a reload;
axe-core on each state, light and dark."""

import pytest

from assistant.models import Turn
from conversations.models import Message
from tests.web.accessibility import assert_accessible
from tests.web.test_browser import send, wait_for_reply

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ANNOUNCER = "document.querySelector('[data-announcer]').textContent"
REPLY_SET = '.versions[data-versions="reply"]'
MESSAGE_SET = '.versions[data-versions="message"]'


def shown(page, selector):
    """The versions of the set `selector` that are visible, by their number."""
    return [node.get_attribute("data-version") for node in page.locator(f"{selector} > .version").all()
            if node.is_visible()]


def pager(page, selector):
    return page.locator(f"{selector} > .version:not([hidden]) > [data-pager]")


def test_regenerate_then_edit_keep_previous_versions(browser, owner):
    page = browser.page(owner)
    page.goto("/")
    send(page, "hello")
    wait_for_reply(page)

    page.get_by_role("button", name="Regenerate").click()
    wait_for_reply(page)
    assert Turn.objects.count() == 2
    assert page.locator(".msg--assistant").count() == 2 and page.locator(".msg--assistant:visible").count() == 1
    assert pager(page, REPLY_SET).locator("[aria-hidden=true]").all_inner_texts() == ["‹", "2 / 2", "›"]
    assert "Version 2 of 2" in pager(page, REPLY_SET).inner_text()
    assert page.get_by_role("button", name="Regenerate").count() == 1  # on the current reply only

    page.get_by_role("button", name="Edit your message", exact=True).click()
    composer = page.get_by_label("Message to the assistant")
    assert composer.input_value() == "hello"
    assert page.evaluate("document.activeElement.id") == "composer-input"
    composer.fill("search my notes for budget")
    composer.press("Enter")
    wait_for_reply(page)
    assert page.locator(".msg--user").count() == 2 and page.locator(".msg--user:visible").count() == 1
    assert page.locator(".msg--user.msg--previous").count() == 1
    assert "search my notes for budget" in page.locator(".msg--user:not(.msg--previous)").inner_text()
    # The message's pager brings back the old message with its replies (their own set).
    page.get_by_role("group", name="Versions of your message").get_by_role("button", name="Previous version").click()
    assert shown(page, MESSAGE_SET) == ["1"]
    assert page.locator(".msg--user:visible .msg__bubble").inner_text().strip() == "hello"
    assert shown(page, f"{MESSAGE_SET} {REPLY_SET}") == ["2"]
    assert page.evaluate("document.activeElement.getAttribute('data-version-step')") == "1"  # Previous is disabled
    assert_accessible(page, "the first version of an edited message")
    page.keyboard.press("Enter")
    assert shown(page, MESSAGE_SET) == ["2"]
    old, new = Message.objects.filter(role="user").order_by("seq")
    assert old.superseded_at and new.replaces == old.client_id and new.superseded_at is None
    current_replies = Message.objects.filter(role="assistant", superseded_at__isnull=True)
    assert current_replies.count() == 2  # the tool step and its summary
    assert_accessible(page, "a conversation with previous versions")
    browser.shot(page, "versions")


def test_versions_page_by_keyboard_arrive_live_and_survive_a_reload(browser, owner):
    page = browser.page(owner)
    page.goto("/")
    send(page, "hello")
    wait_for_reply(page)
    page.get_by_role("button", name="Regenerate").click()
    # The reply being written is the newest version of its set at once, without a reload.
    page.locator(f"{REPLY_SET} > .version:not([hidden]) .msg--assistant.is-live").wait_for()
    assert shown(page, REPLY_SET) == ["2"] and "2 / 2" in pager(page, REPLY_SET).inner_text()
    wait_for_reply(page)
    page.get_by_role("button", name="Regenerate").click()
    wait_for_reply(page)
    assert shown(page, REPLY_SET) == ["3"]
    assert page.locator(".msg--assistant:visible").count() == 1
    previous = page.get_by_role("button", name="Previous version")
    assert page.get_by_role("button", name="Next version").is_disabled()
    assert_accessible(page, "three versions of a reply, the newest shown")

    previous.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => {ANNOUNCER} === 'Version 2 of 3'")
    assert shown(page, REPLY_SET) == ["2"]
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(f"() => {ANNOUNCER} === 'Version 1 of 3'")
    assert shown(page, REPLY_SET) == ["1"]
    # At the first version Previous is disabled: focus is on Next, never lost.
    assert page.evaluate("document.activeElement.textContent") == "›Next version"
    assert page.get_by_role("group", name="Versions of this reply").get_by_text("Version 1 of 3").count() == 1
    assert_accessible(page, "the first of three versions")
    browser.shot(page, "versions-pager")
    page.emulate_media(color_scheme="dark")
    assert_accessible(page, "the first of three versions in dark")
    page.emulate_media(color_scheme="light")

    page.keyboard.press("ArrowRight")
    assert shown(page, REPLY_SET) == ["2"]
    page.reload()
    assert shown(page, REPLY_SET) == ["3"]  # the newest, rendered by the server
    assert page.locator(f"{REPLY_SET} > .version").count() == 3
    pager(page, REPLY_SET).get_by_role("button", name="Previous version").click()
    assert shown(page, REPLY_SET) == ["2"]

"""Regenerate and edit in real Chromium: new turns, the old versions kept and
labelled; axe-core on the page with versions."""

import pytest

from assistant.models import Turn
from conversations.models import Message
from tests.web.accessibility import assert_accessible
from tests.web.test_browser import send, wait_for_reply

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_regenerate_then_edit_keep_previous_versions(browser, owner):
    page = browser.page(owner)
    page.goto("/")
    send(page, "hello")
    wait_for_reply(page)

    page.get_by_role("button", name="Regenerate").click()
    wait_for_reply(page)
    assert Turn.objects.count() == 2
    assert page.locator(".msg--assistant").count() == 2
    assert page.locator(".msg--assistant.msg--previous .version-label").inner_text().lower() == "previous version"
    assert page.get_by_role("button", name="Regenerate").count() == 1  # on the current reply only

    page.get_by_role("button", name="Edit your message", exact=True).click()
    composer = page.get_by_label("Message to the assistant")
    assert composer.input_value() == "hello"
    assert page.evaluate("document.activeElement.id") == "composer-input"
    composer.fill("search my notes for budget")
    composer.press("Enter")
    wait_for_reply(page)
    assert page.locator(".msg--user").count() == 2
    assert page.locator(".msg--user.msg--previous").count() == 1
    assert "search my notes for budget" in page.locator(".msg--user:not(.msg--previous)").inner_text()
    old, new = Message.objects.filter(role="user").order_by("seq")
    assert old.superseded_at and new.replaces == old.client_id and new.superseded_at is None
    current_replies = Message.objects.filter(role="assistant", superseded_at__isnull=True)
    assert current_replies.count() == 2  # the tool step and its summary
    assert_accessible(page, "a conversation with previous versions")
    browser.shot(page, "versions")

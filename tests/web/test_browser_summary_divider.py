"""Issue 32 in Chromium: a conversation whose older messages are summarized
shows the divider before the first message the model receives whole; the
summary opens under it; every message stays on the page; axe-core finds no
violation, light and dark, at 1280 and 375 px."""

import pytest
from django.utils import timezone

from conversations.models import Summary, Thread
from tests.assistant.test_long_conversations import seed_conversation
from tests.web.accessibility import assert_accessible

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DIVIDER = "Earlier messages are summarized for the assistant"


@pytest.mark.parametrize("scheme, width", [("light", 1280), ("dark", 375)])
def test_the_divider_shows_where_the_summary_takes_over_and_opens_on_demand(browser, owner, scheme, width):
    thread = seed_conversation(owner, 30)
    Summary.objects.create(thread=thread, through_seq=20, created_at=timezone.now(),
                           content="Earlier in this conversation, the person:\n- moved the budget review to Thursday")
    Thread.objects.filter(id=thread.id).update(summary_seq=20)
    page = browser.page(owner, width=width)
    page.emulate_media(color_scheme=scheme, reduced_motion="reduce")
    page.goto(f"/c/{thread.id}/")
    divider = page.locator("[data-summary-divider]")
    divider.wait_for()
    assert DIVIDER in divider.inner_text()
    assert not page.get_by_text("moved the budget review to Thursday").is_visible()
    # Right after message 19 (the last summarized) and before message 20 (the first sent whole).
    before = page.get_by_text("#19 The quarterly", exact=False).bounding_box()
    after = page.get_by_text("#20 The quarterly", exact=False).bounding_box()
    box = divider.bounding_box()
    assert before["y"] < box["y"] < after["y"]
    assert page.locator(".msg").count() == 30  # nothing left out
    divider.locator("summary").click()
    assert page.get_by_text("moved the budget review to Thursday").is_visible()
    assert_accessible(page, f"a summarized conversation, {scheme}, {width} px")
    browser.shot(page, f"summary-divider-{scheme}-{width}")

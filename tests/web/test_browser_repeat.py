"""Issue 22, point 8 in real Chromium: two identical e-mail cards; once one is
confirmed, Confirm on the other is refused, the card then says an identical
action was done and offers "Confirm again", which sends it a second time."""

import pytest
from django.core import mail

from tests.web.test_browser import send, wait_for_reply

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_second_identical_email_needs_confirm_again(browser, owner):
    page = browser.page(owner)
    page.goto("/")
    for _ in range(2):
        send(page, "email Lunch at noon? to marie.keller@example.com")
        wait_for_reply(page)
    cards = page.locator(".card--pending")
    assert cards.count() == 2
    first, second = cards.nth(0), cards.nth(1)
    first_id, second_id = first.get_attribute("data-card-id"), second.get_attribute("data-card-id")
    first.get_by_role("button", name="Confirm").click()
    page.locator(f'#card-{first_id}.card--confirmed').wait_for()
    assert len(mail.outbox) == 1

    page.locator(f"#card-{second_id}").get_by_role("button", name="Confirm").click()
    again = page.locator(f"#card-{second_id}[data-card-repeat]")
    again.wait_for()
    text = again.inner_text()
    assert text.index("An identical action was already confirmed") < text.index("Send an email")
    assert "Confirm again" in again.locator("[data-card-error]").inner_text()
    assert len(mail.outbox) == 1  # the refused click sent nothing

    again.get_by_role("button", name="Confirm again").click()
    page.locator(f"#card-{second_id}.card--confirmed").wait_for()
    assert len(mail.outbox) == 2

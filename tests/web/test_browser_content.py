"""Readable content in real Chromium: Copy on replies and code blocks (with the
language), bare URLs as links, a table that scrolls in its own focusable
region at 375 px, a long message collapsed behind "Show more"; axe-core."""

import pytest

from tests.web.accessibility import assert_accessible
from tests.web.conftest import make_conversation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REPLY = """Here is the script (see https://example.com/docs for more).

```python
print("hello")
```

| Destination | Departure time | Platform and sector information |
|---|---|---|
| Zurich Hauptbahnhof | 09:02 | Platform 7, sectors A to D |
"""
CLIPBOARD = "() => navigator.clipboard.readText()"


def test_copy_buttons_copy_the_code_and_the_reply(browser, owner):
    thread = make_conversation(owner, reply=REPLY)
    page = browser.page(owner)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"/c/{thread.id}/")
    assert page.locator(".codeblock__lang").inner_text() == "python"
    link = page.get_by_role("link", name="https://example.com/docs")
    # The model's link goes through the interstitial (issue 33), its destination in its title.
    assert link.get_attribute("href").startswith("/out/?to=")
    assert link.get_attribute("title") == "https://example.com/docs"

    page.get_by_role("button", name="Copy python code").click()
    assert page.evaluate(CLIPBOARD) == 'print("hello")\n'
    page.get_by_role("button", name="Copied").wait_for()
    page.get_by_role("button", name="Copy reply").click()
    copied = page.evaluate(CLIPBOARD)
    assert copied.startswith("Here is the script") and "Zurich Hauptbahnhof" in copied
    assert_accessible(page, "a reply with code, a link and a table")
    browser.shot(page, "reply-readable")


def test_a_table_scrolls_sideways_at_375_px_in_a_focusable_region(browser, owner):
    thread = make_conversation(owner, reply=REPLY)
    page = browser.page(owner, width=375, height=740)
    page.goto(f"/c/{thread.id}/")
    region = page.get_by_role("region", name="Table (scrolls sideways)")
    widths = region.evaluate("node => [node.scrollWidth, node.clientWidth]")
    assert widths[0] > widths[1]  # wider than the screen: it scrolls
    cell = page.get_by_role("cell", name="Platform 7, sectors A to D")
    assert cell.evaluate("node => node.getClientRects().length") == 1
    line_height = cell.evaluate("node => parseFloat(getComputedStyle(node).lineHeight) || 20")
    assert cell.bounding_box()["height"] < 2 * line_height + 12  # one line, not a letter per line
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")  # the page does not scroll
    region.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.querySelector('.table-scroll').scrollLeft > 0")
    assert_accessible(page, "a wide table at 375 px")
    browser.shot(page, "mobile-table")


def test_a_long_message_is_collapsed_behind_show_more(browser, owner):
    thread = make_conversation(owner, content="A very long message. " * 500)
    page = browser.page(owner)
    page.goto(f"/c/{thread.id}/")
    bubble = page.locator(".msg--user .prose")
    assert bubble.evaluate("node => node.clientHeight") <= 480
    more = page.get_by_role("button", name="Show more")
    assert more.get_attribute("aria-expanded") == "false"
    more.click()
    assert bubble.evaluate("node => node.clientHeight") > 480
    assert page.get_by_role("button", name="Show less").get_attribute("aria-expanded") == "true"
    assert_accessible(page, "a long message opened")

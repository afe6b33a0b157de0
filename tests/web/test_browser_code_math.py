"""Coloured code and typeset maths in real Chromium (issue 25): a scripted
model's reply, streamed, ends with its Python coloured by the server's spans
and its formulas typeset by KaTeX (the vendored copy, its fonts loaded), in the
chat page and in the panel of a host page; prices stay text, a broken formula
stays TeX marked as such, Copy gives the TeX back; not one CSP violation; axe
in light and dark."""

import pytest

from assistant.loop import run_turn
from tests.fakes.scripted import ScriptedClient, say
from tests.web.accessibility import assert_accessible
from tests.web.test_browser_files import queued_turn, quiet_browser  # noqa: F401 (a fixture)
from tests.web.test_csp_browser import RECORD_VIOLATIONS
from workspace.management.commands.seed_demo_workspace import seed

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REPLY = """Here is the function:

```python
def energy(mass):
    return mass * C ** 2  # joules
```

It computes $E=mc^2$, and in general
$$
\\frac{1}{\\sqrt{1 - v^2/c^2}}
$$

A ticket costs $5 and a pass $10. This one is broken: $\\frac{1$

$$
x_1 + x_2 + x_3 + x_4 + x_5 + x_6 + x_7 + x_8 + x_9 + x_{10} + x_{11} + x_{12} + x_{13} + x_{14} + x_{15} + x_{16}
$$"""
REPLIED = "() => !document.querySelector('.msg--assistant.is-live') && document.querySelector('.msg--assistant .katex')"
LOADED_FONTS = """async () => { await document.fonts.ready;
  return [...document.fonts].filter((f) => f.status === 'loaded').map((f) => f.family.replaceAll('"', '')); }"""
COLOUR = "(node) => getComputedStyle(node).color"


def send_and_reply(page, composer):
    composer.fill("Show me the energy formula in Python")
    composer.press("Enter")
    run_turn(queued_turn().id, client=ScriptedClient(say(REPLY)))
    page.wait_for_function(REPLIED)


def assert_readable(page, scope):
    """The reply's code coloured, its formulas typeset, its prices text, its broken formula TeX."""
    reply = scope.locator(".msg--assistant").last
    keyword = reply.locator("pre .tok-k", has_text="def")
    assert keyword.evaluate(COLOUR) != reply.locator("pre code").evaluate(COLOUR)
    assert reply.locator("pre .tok-c1").inner_text() == "# joules"
    inline, display = reply.locator(".math .katex").all()[:2]
    assert inline.locator("annotation").text_content() == "E=mc^2"
    assert reply.locator(".math--display .katex-display").count() == 2
    assert "\\sqrt" in display.locator("annotation").text_content()
    assert "A ticket costs $5 and a pass $10." in reply.inner_text()
    broken = reply.locator(".math--error")
    assert broken.inner_text() == "\\frac{1" and "KaTeX parse error" in broken.get_attribute("title")


def test_a_streamed_reply_shows_coloured_code_and_typeset_maths(quiet_browser, owner):  # noqa: F811
    page = quiet_browser.page(owner)
    page.add_init_script(RECORD_VIOLATIONS)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    failed = []
    page.on("response", lambda response: failed.append(response.url) if response.status >= 400 else None)
    page.goto("/")
    send_and_reply(page, page.get_by_label("Message to the assistant"))

    assert_readable(page, page.locator("[data-messages]"))
    announcer = page.locator("assistant-chat [data-announcer]")  # the formula read once, as its TeX
    page.wait_for_function("() => document.querySelector('assistant-chat [data-announcer]').textContent")
    assert "It computes $E=mc^2$, and" in announcer.text_content() and "mc2" not in announcer.text_content()
    keyword = page.locator(".msg--assistant pre .tok-k").first
    assert keyword.evaluate(COLOUR) == "rgb(179, 38, 30)"  # #b3261e, foundation/highlight.py's light keyword
    assert {"KaTeX_Main", "KaTeX_Math"} <= set(page.evaluate(LOADED_FONTS))
    page.get_by_role("button", name="Copy reply").click()
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert "It computes $E=mc^2$, and in general" in copied and "return mass * C ** 2" in copied
    assert "\\frac{1}{\\sqrt{1 - v^2/c^2}}" in copied and "mc2" not in copied
    assert page.evaluate("window.__violations") == [] and failed == []
    assert_accessible(page, "a reply with coloured code and maths, light")
    quiet_browser.shot(page, "reply-code-maths")

    page.emulate_media(color_scheme="dark", reduced_motion="reduce")
    assert keyword.evaluate(COLOUR) == "rgb(255, 139, 128)"  # #ff8b80, the dark keyword
    assert_accessible(page, "a reply with coloured code and maths, dark")
    quiet_browser.shot(page, "reply-code-maths-dark")

    page.reload()  # the stored conversation, rendered on load
    page.wait_for_function(REPLIED)
    assert_readable(page, page.locator("[data-messages]"))
    assert page.evaluate("window.__violations") == []

    page.set_viewport_size({"width": 375, "height": 740})
    page.reload()
    page.wait_for_function(REPLIED)
    wide = page.locator(".math--display").last
    assert wide.get_attribute("tabindex") == "0"  # it scrolls sideways, reachable by keyboard
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")  # the page does not
    assert_accessible(page, "a wide formula at 375 px, dark")
    quiet_browser.shot(page, "mobile-code-maths")
    # What KaTeX's own error rendering (throwOnError: false) does, refused and heard:
    page.evaluate("document.querySelector('.math--error').setAttribute('style', 'color: red')")
    page.wait_for_function("() => window.__violations.some((v) => v.startsWith('style-src'))")


def test_the_panel_of_a_host_page_shows_them_too(quiet_browser, owner):  # noqa: F811
    seed(owner.member)
    page = quiet_browser.page(owner)
    page.add_init_script(RECORD_VIOLATIONS)
    page.emulate_media(color_scheme="dark", reduced_motion="reduce")
    page.goto("/notes/")
    page.get_by_role("button", name="Assistant", exact=True).click()
    panel = page.get_by_role("complementary", name="Assistant")
    send_and_reply(page, panel.get_by_label("Message to the assistant"))

    assert_readable(page, panel)
    assert page.evaluate("window.__violations") == []
    assert_accessible(page, "the panel with coloured code and maths, dark")


def test_a_code_block_in_the_persons_message_is_reached_by_keyboard_at_375_px(quiet_browser, owner):  # noqa: F811
    """Issue 34.10: a long line in the person's own code scrolls sideways; Tab reaches it."""
    page = quiet_browser.page(owner, width=375, height=740)
    page.goto("/")
    composer = page.get_by_label("Message to the assistant")
    composer.fill("Why does this fail?\n\n```python\n" + "value = compute(" + ", ".join(f"a{n}" for n in range(40))
                  + ")\n```")
    composer.press("Enter")
    run_turn(queued_turn().id, client=ScriptedClient(say("It takes fewer arguments.")))
    code = page.locator(".msg--user pre")
    page.wait_for_function("() => document.querySelector('.msg--user pre')?.tabIndex === 0")
    assert code.evaluate("node => node.scrollWidth > node.clientWidth")  # it does scroll sideways
    code.focus()
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.matches('.msg--user pre')")
    assert_accessible(page, "the person's code block at 375 px")

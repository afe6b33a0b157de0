"""A phone's width (375 px) in real Chromium: the top bar one row high with the
account's items in a menu, the Edit button on screen, the organization's
members as cards and its change log in words; axe-core light and dark."""

import pytest

from assistant_engine.organizations.models import Membership, Organization
from tests.conftest import make_person
from tests.web.accessibility import assert_accessible
from tests.web.conftest import make_conversation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HEADER_HEIGHT = "document.querySelector('.topbar').getBoundingClientRect().height"
INSIDE = "node => { const r = node.getBoundingClientRect(); return r.left >= 0 && r.right <= window.innerWidth; }"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_top_bar_is_one_row_with_the_account_in_a_menu(browser, owner, scheme):
    other = Organization.objects.create(name="Initech", slug="initech")
    admin = make_person("bea", other, role="admin")
    Membership.objects.create(organization=owner.organization, user=admin.user, role="admin")  # two organizations
    page = browser.page(admin, width=375, height=812)
    page.emulate_media(color_scheme=scheme, reduced_motion="reduce")
    page.goto("/organizations/")  # two organizations: the person chooses one first
    page.locator(".org-list__choice").filter(has_text=owner.organization.name).click()
    page.wait_for_url(f"{browser.url}/")
    for path in ("/", "/organization/", "/data/", "/tokens/", "/notes/"):
        page.goto(path)
        assert page.evaluate(HEADER_HEIGHT) <= 64, path
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
    page.goto("/")
    toggle = page.get_by_role("button", name="Account menu")
    assert toggle.get_attribute("aria-expanded") == "false"
    assert not page.get_by_role("link", name="Your data").is_visible()
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    for name in ("Your data", "API tokens", "Organization"):
        assert page.get_by_role("link", name=name, exact=True).is_visible()
    for control in ("Organization", "Language (applied when chosen)"):
        assert page.get_by_label(control, exact=True).is_visible()
    assert page.get_by_role("button", name="Log out").is_visible()
    assert page.evaluate("document.activeElement.closest('[data-account-menu]') !== null")
    menu = page.locator("[data-account-menu]")
    assert menu.evaluate(INSIDE)
    assert_accessible(page, f"the account menu open at 375 px ({scheme})")
    browser.shot(page, f"mobile-account-menu-{scheme}")
    page.keyboard.press("Escape")
    assert toggle.get_attribute("aria-expanded") == "false" and not menu.is_visible()
    assert page.evaluate("document.activeElement.matches('[data-account-toggle]')")
    toggle.click()
    page.get_by_role("link", name="API tokens").click()
    page.wait_for_url("**/tokens/")

    # On a wide screen too (issue 34.5: with the items in it, the bar wrapped to two rows even at 1600 px).
    for width in (1024, 1280, 1600):
        page.set_viewport_size({"width": width, "height": 820})
        for path in ("/", "/notes/", "/organization/"):
            page.goto(path)
            assert page.evaluate(HEADER_HEIGHT) <= 64, (width, path)
    assert not page.get_by_role("link", name="Your data").is_visible()
    page.get_by_role("button", name="Account menu").click()
    assert page.get_by_role("link", name="Your data").is_visible()
    assert_accessible(page, f"the account menu open at 1600 px ({scheme})")


def test_the_edit_button_stays_on_screen(browser, owner):
    # A code block's long line: the bubble can't wrap it, and pushed Edit off the screen's left edge.
    long = ("Please look at this:\n\n```\n"
            "select * from notes where title like '%offsite%' order by created_at desc limit 50\n```")
    thread = make_conversation(owner, content=long)
    page = browser.page(owner, width=375, height=812)
    page.goto(f"/c/{thread.id}/")
    edit = page.get_by_role("button", name="Edit your message")
    edit.scroll_into_view_if_needed()
    assert edit.evaluate(INSIDE)
    assert page.locator(".msg--user .msg__bubble").evaluate(INSIDE)
    edit.click()
    assert page.get_by_label("Message to the assistant").input_value().startswith("Please look")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_members_are_cards_and_changes_are_sentences_at_375_px(browser, owner, colleague, scheme):
    admin = make_person("ada", owner.organization, role="admin")
    page = browser.page(admin, width=375, height=812)
    page.emulate_media(color_scheme=scheme, reduced_motion="reduce")
    page.goto("/organization/")
    card = page.locator('[data-member="colin"]')
    assert card.evaluate("node => getComputedStyle(node).display") == "block"
    assert card.evaluate(INSIDE)
    cap = card.get_by_label("Cap of colin")
    assert cap.is_visible() and cap.evaluate(INSIDE)
    cap.fill("20")
    card.get_by_role("button", name="Set").click()
    page.get_by_role("status").filter(has_text="The cap was changed.").wait_for()
    page.locator('[data-member="colin"]').get_by_label("Reason to suspend colin").fill("Left the project")
    page.locator('[data-member="colin"]').get_by_role("button", name="Suspend").click()
    page.get_by_role("status").filter(has_text="The member was suspended.").wait_for()
    changes = [text.split(": ", 1)[1] for text in page.locator("[data-changes] li").all_inner_texts()]
    assert changes == ["ada suspended colin (reason: Left the project)", "ada set colin's monthly cap to 20 credits"]
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    assert_accessible(page, f"members as cards at 375 px ({scheme})")
    browser.shot(page, f"mobile-organization-members-{scheme}", full_page=True)
    wide = browser.page(admin)
    wide.goto("/organization/")
    assert wide.locator('[data-member="colin"]').evaluate("node => getComputedStyle(node).display") == "table-row"

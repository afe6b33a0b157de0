"""The organization page in real headless Chromium: an admin sets a cap and
suspends a member; the member sees no organization page, then the suspension."""

import pytest

from assistant_engine.organizations.models import Membership, OrganizationChange
from tests.conftest import make_person
from tests.web.accessibility import open_account_menu

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_admin_caps_and_suspends_a_member_who_then_sees_the_suspension(browser, owner, colleague):
    admin = make_person("ada", owner.organization, role="admin")
    page = browser.page(admin)
    page.goto("/")
    open_account_menu(page)
    page.get_by_role("link", name="Organization").click()
    page.wait_for_url(f"{browser.url}/organization/")
    row = page.locator('[data-member="colin"]')
    assert row.locator("[data-state]").inner_text() == "Active"

    row.get_by_label("Cap of colin").fill("25")
    row.get_by_role("button", name="Set").click()
    page.get_by_role("status").filter(has_text="The cap was changed.").wait_for()
    row = page.locator('[data-member="colin"]')
    row.get_by_label("Reason to suspend colin").fill("Left the project")
    row.get_by_role("button", name="Suspend").click()
    page.get_by_role("status").filter(has_text="The member was suspended.").wait_for()

    assert page.locator('[data-member="colin"] [data-state]').inner_text() == "Suspended: Left the project"
    changes = page.locator("[data-changes] li")
    assert changes.count() == 2 and "ada suspended colin (reason: Left the project)" in changes.nth(0).inner_text()
    assert page.locator('[data-member="ada"]').get_by_role("button", name="Suspend").count() == 0
    browser.shot(page, "organization", full_page=True)
    assert Membership.objects.get(user=colleague.user).monthly_cap_credits == 25
    assert OrganizationChange.objects.count() == 2

    member_page = browser.page(owner)
    member_page.goto("/")
    assert member_page.get_by_role("link", name="Organization").count() == 0
    assert member_page.goto("/organization/").status == 404

    suspended = browser.page(colleague)
    assert suspended.goto("/").status == 403
    assert suspended.get_by_role("heading", name="Your membership is suspended").is_visible()


def test_the_organization_page_fits_a_narrow_screen(browser, owner):
    admin = make_person("ada", owner.organization, role="admin")
    page = browser.page(admin, width=375, height=812)
    page.goto("/organization/")
    assert page.get_by_role("heading", name=owner.organization.name).is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    browser.shot(page, "mobile-organization", full_page=True)

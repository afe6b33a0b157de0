"""The tokens page in real Chromium (issue 22.9): a reload after creating a
token creates no second one, the Copy button copies the token whole, and
Revoke asks first."""

import pytest

from assistant_engine.organizations.models import ApiToken

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_create_copy_reload_and_revoke(browser, owner):
    page = browser.page(owner)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto("/tokens/")
    page.get_by_label("Name (what uses it)").fill("Backup script")
    page.get_by_role("button", name="Create a token").click()
    page.wait_for_url("**/tokens/")
    token = page.locator("#new-token-value").inner_text()
    assert len(token) > 20

    copy = page.get_by_role("button", name="Copy the token")
    copy.click()
    page.get_by_role("button", name="Copied").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == token

    page.reload()  # once, this sent the form again: a second token
    assert page.locator("#new-token-value").count() == 0
    assert ApiToken.objects.filter(user=owner.user).count() == 2
    row = ApiToken.objects.get(user=owner.user, name="Backup script")
    item = page.locator(f'[data-token="{row.public_id}"]')
    assert item.locator("[data-token-prefix]").inner_text() == token[:8] + "…"
    assert item.locator("[data-token-last-use]").inner_text() == "never used"

    item.get_by_role("link", name="Revoke").click()
    page.locator("[data-revoke-question]").wait_for()
    assert ApiToken.objects.filter(pk=row.pk).exists()  # asking revoked nothing
    page.get_by_role("button", name="Revoke").click()
    page.wait_for_url("**/tokens/")
    assert not ApiToken.objects.filter(pk=row.pk).exists()
    assert page.locator(f'[data-token="{row.public_id}"]').count() == 0

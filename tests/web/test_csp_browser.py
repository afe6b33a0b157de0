"""The Content-Security-Policy in real headless Chromium: the API docs (Swagger
UI from the app) and the admin render with not one violation."""

import pytest

from tests.web.accessibility import open_account_menu

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Collect every violation the page reports, from its first byte.
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener('securitypolicyviolation',
  (event) => window.__violations.push(`${event.violatedDirective} ${event.blockedURI}`));
"""


@pytest.fixture
def page_of(chromium, live_server):
    contexts = []

    def open_page():
        context = chromium.new_context(base_url=live_server.url)
        contexts.append(context)
        context.add_init_script(RECORD_VIOLATIONS)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.console_messages = []
        page.on("console", lambda message: page.console_messages.append(message.text))
        return page

    yield open_page
    for context in contexts:
        context.close()


def violations(page) -> list[str]:
    reported = page.evaluate("window.__violations")
    refused = [text for text in page.console_messages if "Content Security Policy" in text]
    return reported + refused


def test_swagger_ui_renders_from_the_app_without_a_violation(page_of):
    page = page_of()
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto("/api/docs/")
    page.locator(".swagger-ui .info .title").wait_for()
    assert "Assistant engine API" in page.locator(".swagger-ui .info .title").inner_text()
    page.locator(".opblock-summary-path", has_text="/api/conversations").first.wait_for()
    assert violations(page) == []
    origin = page.evaluate("location.origin")
    assert requested and [url for url in requested if not url.startswith(origin)] == []


def staff_logged_in(page_of, django_user_model):
    """A superuser logged in to the admin through its own form: the page, on the admin's index."""
    django_user_model.objects.create_superuser("root", "root@example.com", "pw-root")
    page = page_of()
    page.goto("/admin/login/")
    page.get_by_label("Username").fill("root")
    page.get_by_label("Password").fill("pw-root")
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("heading", name="Organizations, conversations, credits and exports").wait_for()
    return page


def test_the_admin_works_without_a_violation(page_of, django_user_model):
    page = staff_logged_in(page_of, django_user_model)
    page.goto("/admin/assistant_organizations/organization/add/")
    page.get_by_label("Name").press_sequentially("Initech Labs")
    page.wait_for_function("() => document.querySelector('#id_slug').value === 'initech-labs'")  # admin's own JS
    page.goto("/admin/assistant_organizations/organization/")
    assert violations(page) == []


def test_a_person_creates_copies_and_revokes_a_token_at_375_px(browser, owner):
    from assistant_engine.organizations.models import ApiToken

    page = browser.page(owner, width=375, height=812)
    page.add_init_script(RECORD_VIOLATIONS)
    page.goto("/")
    open_account_menu(page)  # the account's items, behind their button
    page.get_by_role("link", name="API tokens").click()
    page.get_by_label("Name (what uses it)").fill("Backup script")
    page.get_by_label("Expires in").select_option("30")
    page.get_by_role("button", name="Create a token").click()
    shown = page.locator(".token-value").inner_text().strip()
    assert ApiToken.objects.filter(name="Backup script").count() == 1
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    browser.shot(page, "mobile-tokens")

    page.goto("/tokens/")  # shown once: only the answer to the creation held it
    assert page.locator(".token-value").count() == 0 and shown not in page.content()
    page.get_by_role("link", name="Revoke Backup script").click()  # Revoke asks first, on a page of its own
    page.locator("[data-revoke-question]").wait_for()
    assert page.evaluate("window.__violations") == []
    page.get_by_role("button", name="Revoke").click()
    page.wait_for_url("**/tokens/")
    assert not ApiToken.objects.filter(name="Backup script").exists()
    assert page.evaluate("window.__violations") == []

"""axe-core (bundled by axe-playwright-python: no CDN) run in the page, with the
WCAG 2.1 A and AA rules the UI is held to: every page and state the browser
tests reach is checked, and must have no violation."""

from axe_playwright_python.sync_playwright import Axe

WCAG_21_AA = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]},
    "resultTypes": ["violations"],
}
_axe = Axe()


def axe_violations(page) -> list[str]:
    """One line per violation: the rule and the first offending elements."""
    violations = _axe.run(page, options=WCAG_21_AA).response["violations"]
    return [f"{v['id']}: {[node['target'] for node in v['nodes'][:3]]}" for v in violations]


def assert_accessible(page, state: str) -> None:
    violations = axe_violations(page)
    assert violations == [], f"axe-core found violations in {state}: {violations}"


def open_account_menu(page) -> None:
    """The account's items (links, language, theme, notifications, log out) are
    behind the account button at every width (issue 34.5): open it unless it is."""
    toggle = page.locator("[data-account-toggle]")
    if toggle.get_attribute("aria-expanded") != "true":
        toggle.click()

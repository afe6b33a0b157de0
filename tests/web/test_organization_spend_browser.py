"""The organization page's spend section in real headless Chromium (issue
35.1): for a month of seeded turns, every chart's bars are its table's
numbers (the tables are the ledger's: test_organization_spend.py); no CSP
violation; axe-core finds nothing in light, in dark and at 375 px, where
nothing overflows the screen."""

import pytest

from tests.conftest import make_person
from tests.web.accessibility import assert_accessible
from tests.web.spend_seed import seed_month
from tests.web.test_csp_browser import RECORD_VIOLATIONS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Per chart: its bars' numbers, and its table's body cells (row by row, the row header first).
READ_CHARTS = """() => Object.fromEntries([...document.querySelectorAll('[data-spend-chart]')].map((chart) => [
  chart.dataset.spendChart, {
    bars: [...chart.querySelectorAll('rect')].map((rect) => Number(rect.dataset.credits)),
    rows: [...chart.querySelectorAll('tbody tr')].map((tr) => [...tr.children].map((cell) => cell.innerText.trim())),
    total: [...chart.querySelectorAll('tfoot tr > *')].map((cell) => cell.innerText.trim()),
    drawn: chart.querySelector('svg').getBoundingClientRect().width,
  }]))"""
FILL = "getComputedStyle(document.querySelector('[data-spend-chart=doors] rect')).fill"


@pytest.fixture
def admin_page(browser, owner, colleague):
    admin = make_person("ada", owner.organization, role="admin")
    people = [admin, owner, colleague, *(make_person(f"p{index:02d}", owner.organization) for index in range(9))]
    seed_month(people)

    def open_page(**size):
        page = browser.page(admin, **size)
        page.context.add_init_script(RECORD_VIOLATIONS)  # the strict CSP: drawn with nothing it blocks
        return page

    return open_page


def assert_bars_are_the_tables(charts: dict) -> None:
    for key in ("months", "people", "doors"):
        numbers = [int(row[1]) for row in charts[key]["rows"]]
        assert charts[key]["bars"] == ([n for n in numbers if n] if key == "months" else numbers), key
    days = charts["days"]
    # A day's bars are its models' cells (the row's last cell is the day's total).
    assert sum(days["bars"]) == sum(int(cell) for row in days["rows"] for cell in row[1:-1])
    assert sum(int(row[-1]) for row in days["rows"]) <= int(days["total"][-1])
    assert days["total"][-1] == charts["doors"]["total"][1] == charts["people"]["total"][1]


def test_the_charts_are_their_tables_in_light_and_dark(browser, admin_page):
    page = admin_page()
    page.emulate_media(color_scheme="light", reduced_motion="reduce")
    page.goto("/organization/")
    charts = page.evaluate(READ_CHARTS)

    assert set(charts) == {"days", "months", "people", "doors"}
    assert all(chart["drawn"] > 100 for chart in charts.values())
    assert len(charts["people"]["rows"]) == 11 and charts["people"]["rows"][-1][0] == "Everyone else"
    assert_bars_are_the_tables(charts)
    assert page.evaluate("window.__violations") == []
    assert_accessible(page, "the organization's spend in light")
    light = page.evaluate(FILL)
    browser.shot(page, "organization-spend", full_page=True)

    page.emulate_media(color_scheme="dark", reduced_motion="reduce")
    assert page.evaluate(FILL) != light  # the themes' own colours
    assert page.evaluate(READ_CHARTS) == charts
    assert_accessible(page, "the organization's spend in dark")


def test_the_spend_section_fits_375_px(browser, admin_page):
    page = admin_page(width=375, height=812)
    page.emulate_media(reduced_motion="reduce")
    page.goto("/organization/")
    page.locator('[data-spend-chart="days"]').scroll_into_view_if_needed()

    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    charts = page.evaluate(READ_CHARTS)
    assert all(0 < chart["drawn"] <= 375 for chart in charts.values())
    assert_bars_are_the_tables(charts)
    assert_accessible(page, "the organization's spend at 375 px")
    browser.shot(page, "mobile-organization-spend", full_page=True)

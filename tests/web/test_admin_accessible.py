"""Issue 34.10: axe on the admin pages this project templates or fills (its
index with the staff pages, the exports form, a thread's moderation page with
its rendered messages), logged in as staff, in real Chromium."""

import pytest

from tests.conversations.factories import make_thread
from tests.web.accessibility import axe_violations
from tests.web.test_csp_browser import page_of, staff_logged_in  # noqa: F401 (page_of: a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_admins_own_pages_pass_axe(page_of, django_user_model, owner):  # noqa: F811
    thread = make_thread(owner, title="Trip", messages=2, calls=1)
    spend_of(owner, 850)  # the spend page's chart, tables and past-80 % list have a row
    page = staff_logged_in(page_of, django_user_model)
    found = {}
    for name, url in (("index", "/admin/"), ("exports", "/admin/assistant/turn/exports/"),
                      ("thread", f"/admin/conversations/thread/{thread.id}/change/"),
                      ("spend", "/admin/credits/creditaccount/spend/")):
        page.goto(url)
        found[name] = axe_violations(page)
    assert found == {"index": [], "exports": [], "thread": [], "spend": []}


def spend_of(person, credits: int) -> None:
    from credits.services import credits_reserve, credits_settle
    from tests.credits.support import new_turn

    turn = new_turn()
    credits_reserve(person.member, turn_id=turn)
    credits_settle(turn_id=turn, cost_micros=credits * 10_000)

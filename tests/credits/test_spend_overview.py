"""Staff's view of spend across organizations (issue 35.5): the month's top
spenders and those past the first alert threshold, each a link to its account,
in a fixed number of queries whatever the number of organizations."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from assistant_engine.organizations.models import Organization
from credits.models import CreditAccount
from credits.money import current_month, micros_from_credits
from tests.admin.conftest import logged_in, make_staff

pytestmark = pytest.mark.django_db

PAGE = reverse("admin:credits_creditaccount_spend")


@pytest.fixture
def root_client(django_user_model):
    return logged_in(django_user_model.objects.create_superuser("root", "root@example.com", "pw-root"))


def organizations_that_spent(used_credits: list[int], start: int = 0) -> list[CreditAccount]:
    """One organization of 1000 credits a month per figure, its account this month at that use."""
    now, accounts = timezone.now(), []
    for index, used in enumerate(used_credits, start=start):
        organization = Organization.objects.create(slug=f"org-{index}", name=f"Org {index}", monthly_credits=1000)
        accounts.append(CreditAccount.objects.create(
            organization=organization, month=current_month(now), granted_micros=micros_from_credits(1000),
            used_micros=micros_from_credits(used), opened_at=now, updated_at=now))
    return accounts


def table_rows(html: str, marker: str) -> list[tuple[str, str]]:
    table = html.split(marker, 1)[1].split("</table>", 1)[0]
    return re.findall(r'<th scope="row"><a href="[^"]+">([^<]+)</a></th>\s*<td><a href="[^"]+">(\d+)</a>', table)


def test_staff_see_the_top_spenders_and_those_past_80_percent(root_client):
    accounts = organizations_that_spent([100, 950, 0, 800, 300])

    html = root_client.get(PAGE).content.decode()

    assert table_rows(html, "data-spend-top") == [("Org 1", "950"), ("Org 3", "800"), ("Org 4", "300"),
                                                   ("Org 0", "100")]  # none for who spent nothing
    assert table_rows(html, "data-spend-past") == [("Org 1", "950"), ("Org 3", "800")]
    assert reverse("admin:credits_creditaccount_change", args=[accounts[1].pk]) in html
    assert html.count("<rect ") == 4


def test_the_page_costs_the_same_queries_at_5_and_50_organizations(root_client):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert root_client.get(PAGE).status_code == 200
        return len(captured)

    organizations_that_spent([10, 20, 850, 30, 40])
    five = queries()
    organizations_that_spent(list(range(1, 45)) + [900], start=5)
    assert queries() == five


def test_staff_without_the_accounts_view_permission_and_anonymous_do_not_see_it(client):
    clerk = logged_in(make_staff("clerk"))
    assert clerk.get(PAGE).status_code == 403
    assert client.get(PAGE).status_code == 302  # to the admin's login

"""The organization page's spend section (issue 35.1): its tables hold the
ledger's sums for a month of turns (by day and model, by month, by person,
by door), its bars the same numbers, for admins only; and the page's queries
stay the same from 5 to 500 members, however many turns."""

from collections import defaultdict

from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone, translation
from django.utils.formats import date_format

from assistant_engine.organizations.models import Membership
from assistant_engine.web.spend import DOORS, model_label
from credits.models import CreditAccount, DayUsage, LedgerEntry, MemberMonthUsage
from credits.money import credits_from_micros, current_month
from credits.spend import months_up_to
from tests.conftest import make_person
from tests.web.conftest import web_client
from tests.web.spend_seed import seed_month, turn_at
from tests.web.spend_tables import spend_tables

PAGE = "/organization/"
# The page's 11 (test_organization_page.py) and the spend section's 2: the month's
# day totals and the last 12 months' accounts; the people's come with the usage already read.
PAGE_QUERIES = 13


def cast(acme, count: int):
    admin = make_person("ada", acme, role="admin")
    return admin, [admin, *(make_person(f"p{index:02d}", acme) for index in range(count - 1))]


def settles_this_month(organization):
    return LedgerEntry.objects.filter(account__organization=organization, account__month=current_month(
        timezone.now()), kind__in=["settle", "stuck"])


def as_text(micros: int) -> str:
    return str(credits_from_micros(micros))


def test_the_tables_hold_the_ledgers_sums_for_a_month_of_turns(acme, globex):
    admin, people = cast(acme, 12)
    seed_month(people)
    seed_month([make_person("gus", globex)])  # another organization's spend is not ours

    charts = spend_tables(web_client(admin).get(PAGE).content.decode())

    entries = list(settles_this_month(acme))
    by_day, by_model, by_door, turns_by_door = defaultdict(dict), defaultdict(int), defaultdict(int), defaultdict(int)
    for entry in entries:
        day = by_day[entry.created_at.date()]
        day[entry.model] = day.get(entry.model, 0) + entry.used_delta
        by_model[entry.model] += entry.used_delta
        by_door[entry.door] += entry.used_delta
        turns_by_door[entry.door] += 1
    models = sorted(by_model, key=lambda model: (-by_model[model], model))
    days = charts["days"]
    assert days["head"] == ["Day", *(model_label(model) for model in models), "All models"]
    assert days["rows"] == [[date_format(day, "MONTH_DAY_FORMAT"), *(as_text(sums.get(m, 0)) for m in models),
                             as_text(sum(sums.values()))] for day, sums in sorted(by_day.items())]
    month_used = CreditAccount.objects.get(organization=acme, month=current_month(timezone.now())).used_micros
    assert days["total"] == ["Month", *(as_text(by_model[m]) for m in models), as_text(month_used)]
    assert sum(by_model.values()) == month_used

    used_of = dict(CreditAccount.objects.filter(organization=acme).values_list("month", "used_micros"))
    assert [row[1] for row in charts["months"]["rows"]] == [
        as_text(used_of.get(month, 0)) for month in months_up_to(current_month(timezone.now()))]
    assert sum(1 for row in charts["months"]["rows"] if row[1] != "0") == 3

    person_used = defaultdict(int)
    for entry in entries:
        person_used[LedgerEntry.objects.get(turn_id=entry.turn_id, kind="reserve").actor.username] += entry.used_delta
    ranked = sorted(person_used.items(), key=lambda item: (-item[1], item[0]))
    rest = sum(used for _name, used in ranked[10:])
    assert [row[:2] for row in charts["people"]["rows"]] == [
        *([name, as_text(used)] for name, used in ranked[:10]), ["Everyone else", as_text(rest)]]
    assert charts["people"]["total"][:2] == ["Everyone", as_text(month_used)]

    assert charts["doors"]["rows"] == [[str(label), as_text(by_door[door]), str(turns_by_door[door])]
                                       for door, label in DOORS.items()]
    assert charts["doors"]["total"] == ["All doors", as_text(month_used), str(len(entries))]
    # Every bar is its table's number.
    assert charts["doors"]["bars"] == [int(row[1]) for row in charts["doors"]["rows"]]
    assert charts["people"]["bars"] == [int(row[1]) for row in charts["people"]["rows"]]
    assert charts["days"]["bars"] == [credits_from_micros(sums[model]) for _day, sums in sorted(by_day.items())
                                      for model in models if sums.get(model)]
    assert charts["months"]["bars"] == [int(row[1]) for row in charts["months"]["rows"] if row[1] != "0"]


def test_a_member_gets_no_spend(owner_web, acme, owner):
    seed_month([owner])
    assert owner_web.get(PAGE).status_code == 404


def add_members(organization, count: int) -> None:
    """`count` more members at once, each with a month's total already spent."""
    users = get_user_model().objects.bulk_create(
        get_user_model()(username=f"bulk{index:03d}", password="!") for index in range(count))
    Membership.objects.bulk_create(Membership(organization=organization, user=user, role="member") for user in users)
    account = CreditAccount.objects.get(organization=organization, month=current_month(timezone.now()))
    MemberMonthUsage.objects.bulk_create(MemberMonthUsage(account=account, user=user, turns=2, used_micros=20_000)
                                         for user in users)


def page_queries(client) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(PAGE).status_code == 200
    return len(captured.captured_queries)


def test_the_pages_queries_are_the_same_for_5_or_500_members_and_many_turns(acme):
    admin, people = cast(acme, 5)
    seed_month(people)
    client = web_client(admin)
    client.get(PAGE)  # the session's organization is stored on the first visit

    small = page_queries(client)
    add_members(acme, 495)
    for index in range(40):
        turn_at(people[index % 5].member, timezone.now(), model="offline", door="api", cost=1_000 + index)
    large = page_queries(client)

    assert (small, large) == (PAGE_QUERIES, PAGE_QUERIES)
    assert Membership.objects.filter(organization=acme).count() == 500
    assert DayUsage.objects.filter(account__organization=acme).count() < 31 * 2 * 6


def test_the_days_and_months_are_written_in_the_persons_language(acme):
    admin, people = cast(acme, 2)
    seed_month(people)

    charts = spend_tables(web_client(admin).get(PAGE, HTTP_ACCEPT_LANGUAGE="de").content.decode())

    with translation.override("de"):
        today = date_format(timezone.now().date(), "MONTH_DAY_FORMAT")
        this_month = date_format(timezone.now().date().replace(day=1), "YEAR_MONTH_FORMAT")
    with translation.override("en"):
        english = date_format(timezone.now().date(), "MONTH_DAY_FORMAT")
    assert charts["days"]["rows"][-1][0] == today != english
    assert charts["months"]["rows"][-1][0] == this_month


def test_an_organization_that_spent_nothing_sees_zeros_and_no_bars(acme):
    admin, _people = cast(acme, 1)

    charts = spend_tables(web_client(admin).get(PAGE).content.decode())

    assert all(chart["bars"] == [] for chart in charts.values())
    assert charts["days"]["rows"] == [["Nothing used yet."]] == charts["people"]["rows"]
    assert [row[1] for row in charts["months"]["rows"]] == ["0"] * 12
    assert charts["doors"]["total"] == ["All doors", "0", "0"]

"""Reads of an organization's spend for its page's charts (issue 35.1): this
month's day totals (DayUsage: per day, model option and door) and the last
months' totals (the accounts), two small queries whatever the number of
people and turns; never a sum of the ledger. The people's ranking comes from
their month totals, which the page already reads (MemberMonthUsage): see
`people_ranking`, pure."""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from credits.models import CreditAccount, DayUsage

MONTHS_SHOWN = 12
PEOPLE_SHOWN = 10


@dataclass(frozen=True)
class DayTotal:
    day: date
    model: str
    door: str
    turns: int
    used_micros: int


@dataclass(frozen=True)
class OrganizationSpend:
    month: str
    days: list[DayTotal]  # this month's rows, by day
    months: list[tuple[str, int]]  # (YYYY-MM, used micros), the oldest first, this month last


def months_up_to(month: str, count: int = MONTHS_SHOWN) -> list[str]:
    """The `count` months ending with `month` (YYYY-MM), the oldest first."""
    year, number = (int(part) for part in month.split("-"))
    index = year * 12 + number - 1
    return [f"{i // 12:04d}-{i % 12 + 1:02d}" for i in range(index - count + 1, index + 1)]


def organization_spend(organization_id: int, month: str) -> OrganizationSpend:
    """Two queries: the month's day totals (a range of their unique index under
    the month's account) and the last months' accounts (their unique index)."""
    rows = (
        DayUsage.objects.filter(account__organization_id=organization_id, account__month=month)
        .values_list("day", "model", "door", "turns", "used_micros").order_by("day", "model", "door")
    )
    shown = months_up_to(month)
    used = dict(CreditAccount.objects.filter(organization_id=organization_id, month__in=shown)
                .values_list("month", "used_micros"))
    return OrganizationSpend(month=month, days=[DayTotal(*row) for row in rows],
                             months=[(each, used.get(each, 0)) for each in shown])


@dataclass(frozen=True)
class PersonSpend:
    name: str
    turns: int
    used_micros: int


def people_ranking(people: Iterable[tuple[int | None, str, int, int]],
                   shown: int = PEOPLE_SHOWN) -> tuple[list[PersonSpend], PersonSpend]:
    """The `shown` people who used the most (ties by name) and everyone else
    summed, from (user id, name, turns, used micros) month totals. An erased
    person's turns (user None) count in everyone else."""
    people = list(people)
    named = sorted((row for row in people if row[0] is not None and row[3] > 0), key=lambda row: (-row[3], row[1]))
    top = [PersonSpend(name, turns, used) for _user, name, turns, used in named[:shown]]
    rest_turns = sum(row[2] for row in people) - sum(person.turns for person in top)
    rest_used = sum(row[3] for row in people) - sum(person.used_micros for person in top)
    return top, PersonSpend("", rest_turns, rest_used)

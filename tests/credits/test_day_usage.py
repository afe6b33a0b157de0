"""The accounts' day totals (credits.models.DayUsage), kept by the ledger's
one write: per day (UTC), model option and door, they add up to the ledger's
charging closes, exactly, however many turns close at once; the rebuild (the
backfill command) derives the same rows from the ledger."""

from collections import Counter
from datetime import UTC, date, datetime, timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from credits.days import day_in_month
from credits.models import DayUsage, Door, LedgerEntry
from credits.services import credits_keep_on_stuck, credits_release, credits_reserve, credits_settle
from tests.credits.support import (
    FEBRUARY_FIRST_MINUTE,
    JANUARY_LAST_MINUTE,
    RESERVATION,
    assert_audit_clean,
    new_turn,
    race,
    totals,
)

MARCH_FIRST = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
MODELS = ("offline", "bedrock-claude-haiku-4-5")
DOORS = (Door.BROWSER, Door.PANEL, Door.API, Door.TELEGRAM)


def turn_in_march(member, *, day: int, model: str, door: str, cost: int) -> None:
    turn_id = new_turn()
    start = MARCH_FIRST + timedelta(days=day)
    credits_reserve(member, turn_id=turn_id, now=start, model=model, door=door)
    credits_settle(turn_id=turn_id, cost_micros=cost, now=start + timedelta(minutes=1))


def kept_days(organization) -> dict[tuple, tuple[int, int]]:
    return {(row.day, row.model, row.door): (row.turns, row.used_micros)
            for row in DayUsage.objects.filter(account__organization=organization)}


def ledger_days(organization) -> dict[tuple, tuple[int, int]]:
    """The same sums, by hand from the ledger's settle and stuck rows."""
    sums: dict[tuple, list[int]] = {}
    for entry in LedgerEntry.objects.filter(account__organization=organization, kind__in=["settle", "stuck"]):
        key = (day_in_month(entry.created_at, entry.account.month), entry.model, entry.door)
        sums.setdefault(key, [0, 0])
        sums[key][0] += 1
        sums[key][1] += entry.used_delta
    return {key: tuple(value) for key, value in sums.items()}


def seed_a_month(owner, colleague) -> None:
    for day in range(28):
        for index, person in enumerate((owner, colleague)):
            turn_in_march(person.member, day=day, model=MODELS[(day + index) % 2], door=DOORS[(day + index) % 4],
                          cost=1_000 * (day + 1) + 7 * index)


def test_a_settled_turn_adds_its_cost_to_its_day_model_and_door(owner, acme):
    turn_in_march(owner.member, day=4, model="offline", door=Door.PANEL, cost=12_345)
    turn_in_march(owner.member, day=4, model="offline", door=Door.PANEL, cost=5)

    assert kept_days(acme) == {(date(2026, 3, 5), "offline", "panel"): (2, 12_350)}
    reserve = LedgerEntry.objects.filter(kind="reserve").first()
    assert (reserve.model, reserve.door) == ("offline", "panel")


def test_a_month_of_turns_adds_up_to_the_ledger_and_the_accounts_used_total(owner, colleague, acme):
    seed_a_month(owner, colleague)

    days = kept_days(acme)
    assert days == ledger_days(acme)
    assert len({day for day, _model, _door in days}) == 28
    assert sum(used for _turns, used in days.values()) == totals(acme, "2026-03")[1]
    assert sum(turns for turns, _used in days.values()) == 56
    assert_audit_clean()


def test_a_stuck_turn_counts_its_reservation_and_a_released_one_nothing(owner, acme):
    stuck, released = new_turn(), new_turn()
    for turn_id in (stuck, released):
        credits_reserve(owner.member, turn_id=turn_id, now=MARCH_FIRST, model="offline", door=Door.API)
    credits_keep_on_stuck(turn_id=stuck, now=MARCH_FIRST)
    credits_release(turn_id=released, reason="the turn never started")

    assert kept_days(acme) == {(date(2026, 3, 1), "offline", "api"): (1, RESERVATION)}


def test_a_turn_closed_after_its_month_counts_on_that_months_last_day(owner, acme):
    turn_id = new_turn()
    credits_reserve(owner.member, turn_id=turn_id, now=JANUARY_LAST_MINUTE, model="offline", door=Door.BROWSER)
    credits_settle(turn_id=turn_id, cost_micros=900, now=FEBRUARY_FIRST_MINUTE)

    assert kept_days(acme) == {(date(2026, 1, 31), "offline", "browser"): (1, 900)}
    assert day_in_month(FEBRUARY_FIRST_MINUTE, "2026-02") == date(2026, 2, 1)


def test_the_rebuild_command_derives_the_same_rows_from_the_ledger(owner, colleague, acme):
    seed_a_month(owner, colleague)
    kept = kept_days(acme)
    DayUsage.objects.all().delete()

    call_command("credits_days_rebuild", "--month", "2026-03")

    assert kept_days(acme) == kept
    call_command("credits_days_rebuild")  # all months again: the same rows, not twice the sums
    assert kept_days(acme) == kept


@pytest.mark.django_db(transaction=True)
def test_turns_settling_at_once_add_up_exactly(owner, colleague, acme):
    racers = 8
    people = [owner, colleague] * (racers // 2)
    turns = [new_turn() for _ in range(racers)]
    for person, turn_id in zip(people, turns, strict=True):
        credits_reserve(person.member, turn_id=turn_id, now=MARCH_FIRST, model="offline", door=Door.BROWSER)

    outcomes = race(racers, lambda index: credits_settle(turn_id=turns[index], cost_micros=1_000 + index,
                                                         now=MARCH_FIRST + timedelta(minutes=5)))

    assert outcomes == [True] * racers
    expected = sum(1_000 + index for index in range(racers))
    assert kept_days(acme) == {(date(2026, 3, 1), "offline", "browser"): (racers, expected)}
    assert totals(acme, "2026-03")[1] == expected
    assert Counter(LedgerEntry.objects.values_list("kind", flat=True))["settle"] == racers
    assert_audit_clean()


@pytest.mark.django_db(transaction=True)
def test_the_migration_fills_the_day_totals_from_the_ledger(owner, acme):
    """Turns settled before the day totals existed: the migration that adds them
    sums the ledger's closes by day (their model and door unknown: "")."""
    seed = [(4, "offline", Door.PANEL, 1_000), (4, MODELS[1], Door.API, 2_000), (9, "offline", Door.API, 30)]
    for day, model, door, cost in seed:
        turn_in_march(owner.member, day=day, model=model, door=door, cost=cost)
    executor = MigrationExecutor(connection)
    executor.migrate([("credits", "0005_credit_alerts")])

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert kept_days(acme) == {(date(2026, 3, 5), "", ""): (2, 3_000), (date(2026, 3, 10), "", ""): (1, 30)}
    assert_audit_clean()

"""Concurrent turn starts and closes, each thread on its own database connection.

On PostgreSQL the account's row lock serializes the racers; on SQLite every
transaction begins IMMEDIATE (config/settings.py), so writers queue at BEGIN
for the database's write lock (30 s timeout). Either way the balance must
never admit more reservations than it covers.
"""

import pytest

from credits.models import CreditAccount, LedgerEntry
from credits.money import micros_from_credits
from credits.services import CreditsExhausted, credits_keep_on_stuck, credits_reserve, credits_settle
from tests.credits.support import MID_MARCH, RESERVATION, assert_audit_clean, kinds, new_turn, race, totals

RACERS = 32
COVERED = 10  # reservations the balance covers, K < N

pytestmark = pytest.mark.django_db(transaction=True)


def reserve_in_march(member):
    return lambda _index: credits_reserve(member, turn_id=new_turn(), now=MID_MARCH)


def split(outcomes):
    refused = [o for o in outcomes if isinstance(o, CreditsExhausted)]
    unexpected = [o for o in outcomes if isinstance(o, Exception) and not isinstance(o, CreditsExhausted)]
    admitted = [o for o in outcomes if not isinstance(o, Exception)]
    return admitted, refused, unexpected


def test_racing_turn_starts_admit_exactly_what_the_balance_covers(owner, acme):
    # 3 × 10 + 2 credits: the leftover 2 credits must not admit an 11th turn.
    acme.monthly_credits = 3 * COVERED + 2
    acme.save(update_fields=["monthly_credits"])

    admitted, refused, unexpected = split(race(RACERS, reserve_in_march(owner.member)))

    assert unexpected == []
    assert (len(admitted), len(refused)) == (COVERED, RACERS - COVERED)
    assert totals(acme, "2026-03") == (micros_from_credits(3 * COVERED + 2), 0, COVERED * RESERVATION)
    assert kinds(acme, "2026-03").count("reserve") == COVERED
    # The month was opened by the race itself, and only once.
    assert kinds(acme, "2026-03").count("open") == 1
    assert_audit_clean()


def test_racing_first_requests_of_a_month_open_it_once(owner, acme):
    admitted, refused, unexpected = split(race(RACERS, reserve_in_march(owner.member)))

    assert (len(admitted), refused, unexpected) == (RACERS, [], [])
    assert CreditAccount.objects.filter(organization=acme, month="2026-03").count() == 1
    assert kinds(acme, "2026-03").count("open") == 1
    assert totals(acme, "2026-03")[2] == RACERS * RESERVATION
    assert_audit_clean()


def test_racing_closers_of_one_turn_move_money_once(owner, acme):
    turn_id = new_turn()
    credits_reserve(owner.member, turn_id=turn_id, now=MID_MARCH)

    def close(index):
        # Half of the racers are the worker settling, half the stuck-turn sweeper.
        if index % 2:
            return credits_keep_on_stuck(turn_id=turn_id)
        return credits_settle(turn_id=turn_id, cost_micros=1_234)

    outcomes = race(RACERS, close)

    assert sorted(outcomes, key=str) == [False] * (RACERS - 1) + [True]
    _, used, reserved = totals(acme, "2026-03")
    assert used in (1_234, RESERVATION) and reserved == 0
    assert LedgerEntry.objects.filter(turn_id=turn_id, kind__in=LedgerEntry.CLOSING_KINDS).count() == 1
    assert_audit_clean()

"""Concurrent turn starts and closes, each thread on its own database connection.

On PostgreSQL the account's conditional UPDATE (and a person's month totals
row, for their cap; the turn's reservation row, for its closers) serializes
the racers; on SQLite every
transaction begins IMMEDIATE (config/settings.py), so writers queue at BEGIN
for the database's write lock (30 s timeout). Either way the balance must
never admit more reservations than it covers.
"""

import pytest

from assistant_engine.organizations.models import Membership
from credits.models import CreditAccount, LedgerEntry
from credits.money import micros_from_credits
from credits.services import (
    CreditsExhausted,
    MemberCapReached,
    credits_keep_on_stuck,
    credits_reserve,
    credits_settle,
    member_spent_micros,
)
from tests.credits.support import (
    MID_MARCH,
    RESERVATION,
    account,
    assert_audit_clean,
    kinds,
    new_turn,
    race,
    totals,
)

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


def cap_of(owner, credits):
    Membership.objects.filter(user=owner.user, organization=owner.organization).update(monthly_cap_credits=credits)


@pytest.mark.postgres_only
def test_one_persons_racing_starts_never_pass_their_cap(owner, acme):
    """The account row is no longer locked through the reservation (issue
    36.3): the person's month totals row serializes their starts instead."""
    cap_of(owner, COVERED * 3 + 2)

    outcomes = race(RACERS, reserve_in_march(owner.member))

    capped = [o for o in outcomes if isinstance(o, MemberCapReached)]
    admitted = [o for o in outcomes if not isinstance(o, Exception)]
    assert (len(admitted), len(capped)) == (COVERED, RACERS - COVERED), outcomes
    march = account(acme, "2026-03")
    assert member_spent_micros(march.pk, owner.user.id) == COVERED * RESERVATION == march.reserved_micros
    assert_audit_clean()


@pytest.mark.postgres_only
def test_one_persons_settles_and_starts_at_once_never_deadlock(owner, acme):
    """A close takes the person's totals before the account, as a start does
    (credits/ledger.py's lock order): no two of them wait on each other."""
    running = [new_turn() for _ in range(RACERS // 2)]
    for turn_id in running:
        credits_reserve(owner.member, turn_id=turn_id, now=MID_MARCH)

    def settle_or_start(index):
        if index % 2:
            return credits_settle(turn_id=running[index // 2], cost_micros=1_000 + index, now=MID_MARCH)
        return credits_reserve(owner.member, turn_id=new_turn(), now=MID_MARCH)

    outcomes = race(RACERS, settle_or_start)

    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    _, used, reserved = totals(acme, "2026-03")
    assert used == sum(1_000 + index for index in range(1, RACERS, 2))
    assert reserved == (RACERS // 2) * RESERVATION
    assert member_spent_micros(account(acme, "2026-03").pk, owner.user.id) == used + reserved
    assert_audit_clean()

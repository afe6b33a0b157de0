"""Holds taken before each model call: a turn never spends what was not granted."""

import pytest
from django.db import IntegrityError, transaction

from credits.ledger import Overdraft, ReservationNotFound, record
from credits.models import CreditAccount, LedgerEntry
from credits.money import micros_from_credits
from credits.services import (
    CreditsExhausted,
    credits_keep_on_stuck,
    credits_reserve,
    credits_reserve_more,
    credits_settle,
)
from tests.credits.support import MID_MARCH, RESERVATION, assert_audit_clean, new_turn, totals

pytestmark = pytest.mark.django_db


def reserve(person):
    turn_id = new_turn()
    credits_reserve(person.member, turn_id=turn_id, now=MID_MARCH)
    return turn_id


def test_a_hold_adds_to_the_turns_reservation_and_returns_what_it_holds(owner, small_org):
    turn_id = reserve(owner)

    assert credits_reserve_more(turn_id=turn_id, micros=micros_from_credits(2)) == micros_from_credits(5)

    assert totals(small_org, "2026-03") == (micros_from_credits(7), 0, micros_from_credits(5))
    extend = LedgerEntry.objects.get(kind="extend")
    assert (extend.turn_id, extend.reserved_delta, extend.job) == (turn_id, micros_from_credits(2), "run_turn")
    assert_audit_clean()


def test_a_hold_the_balance_cannot_cover_is_refused_without_writing(owner, small_org):
    turn_id = reserve(owner)

    with pytest.raises(CreditsExhausted):
        credits_reserve_more(turn_id=turn_id, micros=micros_from_credits(4) + 1)

    assert totals(small_org, "2026-03") == (micros_from_credits(7), 0, RESERVATION)
    assert not LedgerEntry.objects.filter(kind="extend").exists()


def test_settling_releases_every_hold_and_charges_the_real_cost(owner, small_org):
    turn_id = reserve(owner)
    credits_reserve_more(turn_id=turn_id, micros=micros_from_credits(3))

    credits_settle(turn_id=turn_id, cost_micros=41_234)

    assert totals(small_org, "2026-03") == (micros_from_credits(7), 41_234, 0)
    settle = LedgerEntry.objects.get(kind="settle")
    assert settle.reserved_delta == -micros_from_credits(6)
    assert_audit_clean()


def test_a_stuck_turn_keeps_everything_it_held_as_its_cost(owner, small_org):
    turn_id = reserve(owner)
    credits_reserve_more(turn_id=turn_id, micros=micros_from_credits(3))

    credits_keep_on_stuck(turn_id=turn_id)

    assert totals(small_org, "2026-03") == (micros_from_credits(7), micros_from_credits(6), 0)
    assert_audit_clean()


def test_a_closed_turn_takes_no_new_hold(owner):
    turn_id = reserve(owner)
    credits_settle(turn_id=turn_id, cost_micros=10)

    with pytest.raises(ReservationNotFound):
        credits_reserve_more(turn_id=turn_id, micros=1)


def test_a_hold_for_a_turn_never_reserved_is_an_error(db):
    with pytest.raises(ReservationNotFound):
        credits_reserve_more(turn_id=new_turn(), micros=1)


@pytest.mark.parametrize("micros", [0, -5])
def test_a_hold_must_be_positive(owner, micros):
    with pytest.raises(ValueError, match="positive"):
        credits_reserve_more(turn_id=reserve(owner), micros=micros)


def test_the_database_refuses_an_overdrawn_account_even_past_the_services(owner, small_org):
    reserve(owner)
    with pytest.raises(IntegrityError), transaction.atomic():
        CreditAccount.objects.filter(organization=small_org).update(used_micros=micros_from_credits(5))


def test_the_ledger_refuses_a_movement_that_would_overdraw(owner, small_org):
    reserve(owner)
    account = CreditAccount.objects.get(organization=small_org)
    # The account's update is the movement's last statement: the caller's rollback undoes the rest.
    with pytest.raises(Overdraft), transaction.atomic():
        record(account.pk, kind="settle", now=MID_MARCH, turn_id=new_turn(), used_delta=micros_from_credits(5),
               month="2026-03")
    assert totals(small_org, "2026-03") == (micros_from_credits(7), 0, RESERVATION)

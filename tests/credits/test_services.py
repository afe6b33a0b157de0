"""Reserve, settle, keep-on-stuck, release and grant, one transaction at a time."""

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.test import override_settings

from credits.ledger import ReservationNotFound
from credits.models import CreditAccount, LedgerEntry
from credits.money import micros_from_credits
from credits.selectors import credits_summary
from credits.services import (
    CreditsExhausted,
    Reservation,
    credits_grant,
    credits_keep_on_stuck,
    credits_release,
    credits_reserve,
    credits_settle,
)
from tests.credits.support import (
    FEBRUARY_FIRST_MINUTE,
    JANUARY_LAST_MINUTE,
    MID_MARCH,
    RESERVATION,
    account,
    assert_audit_clean,
    kinds,
    new_turn,
    totals,
)

THOUSAND_CREDITS = micros_from_credits(1000)

pytestmark = pytest.mark.django_db


def reserve(person, now=MID_MARCH):
    turn_id = new_turn()
    return turn_id, credits_reserve(person.member, turn_id=turn_id, now=now)


# --- Reserve --------------------------------------------------------------------


def test_first_reservation_opens_the_month_with_the_monthly_allowance(owner):
    turn_id, reservation = reserve(owner)

    assert reservation == Reservation(month="2026-03", micros=RESERVATION)
    assert totals(owner.organization, "2026-03") == (THOUSAND_CREDITS, 0, RESERVATION)
    opening, reserve_row = LedgerEntry.objects.order_by("id")
    assert (opening.kind, opening.granted_delta, opening.actor) == ("open", THOUSAND_CREDITS, owner.user)
    assert (reserve_row.kind, reserve_row.turn_id, reserve_row.actor) == ("reserve", turn_id, owner.user)
    assert reserve_row.reserved_delta == RESERVATION
    assert_audit_clean()


def test_reservations_share_the_organizations_account(owner, colleague):
    reserve(owner)
    reserve(colleague)

    assert CreditAccount.objects.count() == 1
    assert totals(owner.organization, "2026-03") == (THOUSAND_CREDITS, 0, 2 * RESERVATION)


@override_settings(CREDITS_RESERVATION=5)
def test_the_reservation_is_a_setting(owner):
    _, reservation = reserve(owner)

    assert reservation.micros == micros_from_credits(5)


def test_a_reservation_the_balance_cannot_cover_is_refused_without_writing(owner, small_org):
    reserve(owner)
    reserve(owner)
    entries_before = LedgerEntry.objects.count()

    with pytest.raises(CreditsExhausted) as refused:
        reserve(owner)

    assert (refused.value.month, refused.value.remaining_micros) == ("2026-03", micros_from_credits(1))
    assert refused.value.needed_micros == RESERVATION
    assert LedgerEntry.objects.count() == entries_before
    assert totals(small_org, "2026-03") == (micros_from_credits(7), 0, 2 * RESERVATION)


def test_a_refusal_in_a_month_not_yet_opened_writes_nothing_at_all(owner, acme):
    acme.monthly_credits = 0
    acme.save(update_fields=["monthly_credits"])

    with pytest.raises(CreditsExhausted):
        reserve(owner)

    assert not CreditAccount.objects.exists()
    assert not LedgerEntry.objects.exists()


@override_settings(CREDITS_RESERVATION=0)
def test_an_empty_account_starts_no_turn_even_with_a_zero_reservation(owner, small_org):
    turn_id, _ = reserve(owner)
    credits_settle(turn_id=turn_id, cost_micros=micros_from_credits(7))

    with pytest.raises(CreditsExhausted):
        reserve(owner)


def test_a_refusal_inside_the_callers_transaction_rolls_back_the_callers_writes(owner, small_org):
    reserve(owner)
    reserve(owner)

    with pytest.raises(CreditsExhausted), transaction.atomic():
        get_user_model().objects.create_user(username="written-by-the-caller")
        reserve(owner)

    assert not get_user_model().objects.filter(username="written-by-the-caller").exists()
    assert kinds(small_org, "2026-03") == ["open", "reserve", "reserve"]


def test_a_rollback_of_the_callers_transaction_takes_the_reservation_with_it(owner, acme):
    class CallerFailed(Exception):
        pass

    with pytest.raises(CallerFailed), transaction.atomic():
        reserve(owner)
        raise CallerFailed

    assert not CreditAccount.objects.exists()
    assert not LedgerEntry.objects.exists()


def test_reserving_the_same_turn_twice_reserves_once(owner):
    turn_id, first = reserve(owner)

    again = credits_reserve(owner.member, turn_id=turn_id, now=MID_MARCH)

    assert again == first
    assert totals(owner.organization, "2026-03")[2] == RESERVATION
    assert kinds(owner.organization, "2026-03") == ["open", "reserve"]


# --- Settle, keep on stuck, release ---------------------------------------------------


def test_settle_charges_the_cost_and_releases_the_reservation(owner):
    turn_id, _ = reserve(owner)

    assert credits_settle(turn_id=turn_id, cost_micros=12_345) is True

    assert totals(owner.organization, "2026-03") == (THOUSAND_CREDITS, 12_345, 0)
    settle = LedgerEntry.objects.get(kind="settle")
    assert (settle.turn_id, settle.used_delta, settle.reserved_delta) == (turn_id, 12_345, -RESERVATION)
    assert settle.job == "run_turn" and "12345" in settle.reason
    assert_audit_clean()


def test_a_cost_above_what_the_account_holds_is_charged_up_to_the_balance_only(owner, small_org):
    turn_id, _ = reserve(owner)

    credits_settle(turn_id=turn_id, cost_micros=micros_from_credits(10))

    granted, used, reserved = totals(small_org, "2026-03")
    # 7 credits granted: the account can take 7, never 10.
    assert (granted, used, reserved) == (micros_from_credits(7), micros_from_credits(7), 0)
    assert credits_summary(owner.member, now=MID_MARCH).remaining_micros == 0
    assert "30000 micros above the balance not charged" in LedgerEntry.objects.get(kind="settle").reason
    assert_audit_clean()


def test_an_organization_with_nothing_left_starts_no_new_turn(owner, small_org):
    turn_id, _ = reserve(owner)
    credits_settle(turn_id=turn_id, cost_micros=micros_from_credits(10))

    with pytest.raises(CreditsExhausted):
        reserve(owner)


@pytest.mark.parametrize(
    ("close_twice", "expected_used"),
    [
        (lambda turn_id: credits_settle(turn_id=turn_id, cost_micros=1_000), 1_000),
        (lambda turn_id: credits_keep_on_stuck(turn_id=turn_id), RESERVATION),
        (lambda turn_id: credits_release(turn_id=turn_id, reason="never picked up"), 0),
    ],
    ids=["settle", "stuck", "release"],
)
def test_closing_a_turn_twice_moves_money_once(owner, close_twice, expected_used):
    turn_id, _ = reserve(owner)

    assert close_twice(turn_id) is True
    assert close_twice(turn_id) is False

    assert totals(owner.organization, "2026-03") == (THOUSAND_CREDITS, expected_used, 0)
    assert LedgerEntry.objects.filter(turn_id=turn_id).count() == 2
    assert_audit_clean()


def test_a_turn_closed_one_way_is_not_closed_another(owner):
    turn_id, _ = reserve(owner)
    credits_keep_on_stuck(turn_id=turn_id)

    assert credits_settle(turn_id=turn_id, cost_micros=999) is False
    assert credits_release(turn_id=turn_id, reason="late") is False

    assert totals(owner.organization, "2026-03") == (THOUSAND_CREDITS, RESERVATION, 0)


def test_stuck_turn_keeps_its_reservation_as_cost_and_names_the_job(owner):
    turn_id, _ = reserve(owner)

    credits_keep_on_stuck(turn_id=turn_id)

    stuck = LedgerEntry.objects.get(kind="stuck")
    assert (stuck.used_delta, stuck.reserved_delta, stuck.job) == (
        RESERVATION,
        -RESERVATION,
        "fail_stuck_turns",
    )


def test_release_gives_the_reservation_back_with_its_reason(owner):
    turn_id, _ = reserve(owner)

    credits_release(turn_id=turn_id, reason="no worker took the turn")

    assert totals(owner.organization, "2026-03") == (THOUSAND_CREDITS, 0, 0)
    assert "no worker took the turn" in LedgerEntry.objects.get(kind="release").reason


def test_closing_a_turn_that_was_never_reserved_is_an_error(db):
    with pytest.raises(ReservationNotFound):
        credits_settle(turn_id=new_turn(), cost_micros=1)


def test_a_negative_cost_is_refused(owner):
    turn_id, _ = reserve(owner)

    with pytest.raises(ValueError, match="negative"):
        credits_settle(turn_id=turn_id, cost_micros=-1)


# --- Months -------------------------------------------------------------------------


def test_a_turn_reserved_in_january_settles_against_january_after_february_opened(owner, colleague, acme):
    january_turn, reservation = reserve(owner, now=JANUARY_LAST_MINUTE)
    acme.monthly_credits = 2000  # February opens with the allowance of its own first day
    acme.save(update_fields=["monthly_credits"])
    reserve(colleague, now=FEBRUARY_FIRST_MINUTE)

    credits_settle(turn_id=january_turn, cost_micros=4_321)

    assert reservation.month == "2026-01"
    assert totals(acme, "2026-01") == (THOUSAND_CREDITS, 4_321, 0)
    assert totals(acme, "2026-02") == (micros_from_credits(2000), 0, RESERVATION)
    assert_audit_clean()


def test_each_month_opens_once_with_one_open_row(owner, colleague, acme):
    for person in (owner, colleague, owner):
        reserve(person, now=FEBRUARY_FIRST_MINUTE)

    assert kinds(acme, "2026-02").count("open") == 1


# --- Grants -------------------------------------------------------------------------


def test_a_grant_mid_month_adds_to_the_month_and_lets_turns_start_again(owner, small_org, staff):
    reserve(owner)
    reserve(owner)
    with pytest.raises(CreditsExhausted):
        reserve(owner)

    grant = credits_grant(
        organization=small_org, credits=10, staff_user=staff, reason="pilot extension", now=MID_MARCH
    )
    reserve(owner)

    assert (grant.kind, grant.actor, grant.reason, grant.granted_delta) == (
        "grant",
        staff,
        "pilot extension",
        micros_from_credits(10),
    )
    assert totals(small_org, "2026-03") == (micros_from_credits(17), 0, 3 * RESERVATION)
    assert_audit_clean()


def test_a_grant_in_a_month_not_yet_opened_opens_it_first(acme, staff):
    credits_grant(organization=acme, credits=50, staff_user=staff, reason="welcome", now=MID_MARCH)

    assert kinds(acme, "2026-03") == ["open", "grant"]
    assert account(acme, "2026-03").granted_micros == micros_from_credits(1050)


def test_only_staff_grant(acme, owner):
    with pytest.raises(PermissionDenied):
        credits_grant(organization=acme, credits=5, staff_user=owner.user, reason="please")
    assert not LedgerEntry.objects.exists()


@pytest.mark.parametrize(("credits", "reason"), [(0, "nothing"), (-5, "take back"), (5, "  ")])
def test_a_grant_needs_positive_credits_and_a_reason(acme, staff, credits, reason):
    with pytest.raises(ValueError):
        credits_grant(organization=acme, credits=credits, staff_user=staff, reason=reason)
    assert not LedgerEntry.objects.exists()


# --- Summary --------------------------------------------------------------------------


def test_summary_of_a_month_not_yet_opened_is_the_allowance_and_writes_nothing(owner):
    summary = credits_summary(owner.member, now=MID_MARCH)

    assert (summary.month, summary.monthly_credits, summary.granted_credits) == ("2026-03", 1000, 1000)
    assert (summary.used_micros, summary.reserved_micros, summary.remaining_credits) == (0, 0, 1000)
    assert not CreditAccount.objects.exists()


def test_summary_rounds_credits_down_and_keeps_exact_micros(owner):
    turn_id, _ = reserve(owner)
    credits_settle(turn_id=turn_id, cost_micros=15_001)

    summary = credits_summary(owner.member, now=MID_MARCH)

    assert (summary.used_micros, summary.used_credits) == (15_001, 1)
    assert (summary.remaining_micros, summary.remaining_credits) == (THOUSAND_CREDITS - 15_001, 998)

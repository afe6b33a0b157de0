"""Helpers shared by the credits tests."""

import uuid
from datetime import UTC, datetime

from credits.models import CreditAccount, LedgerEntry
from credits.money import micros_from_credits
from credits.selectors import credits_audit_mismatches
from tests.races import race  # noqa: F401 - re-exported for the credits tests

RESERVATION = micros_from_credits(3)
JANUARY_LAST_MINUTE = datetime(2026, 1, 31, 23, 59, tzinfo=UTC)
FEBRUARY_FIRST_MINUTE = datetime(2026, 2, 1, 0, 0, 30, tzinfo=UTC)
MID_MARCH = datetime(2026, 3, 15, 12, 0, tzinfo=UTC)


def new_turn() -> uuid.UUID:
    return uuid.uuid4()


def account(organization, month: str) -> CreditAccount:
    return CreditAccount.objects.get(organization=organization, month=month)


def totals(organization, month: str) -> tuple[int, int, int]:
    """(granted, used, reserved) micros of the month's account."""
    a = account(organization, month)
    return a.granted_micros, a.used_micros, a.reserved_micros


def kinds(organization, month: str) -> list[str]:
    return list(
        LedgerEntry.objects.filter(account__organization=organization, account__month=month).values_list(
            "kind", flat=True
        )
    )


def assert_audit_clean() -> None:
    assert credits_audit_mismatches() == []

"""Helpers shared by the credits tests."""

import threading
import uuid
from datetime import UTC, datetime

from django.db import connection

from credits.models import CreditAccount, LedgerEntry
from credits.money import micros_from_credits
from credits.selectors import credits_audit_mismatches

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


def race(count: int, action) -> list:
    """Run action(i) in `count` threads released together by a barrier.

    Each thread has its own database connection (Django's are per thread) and
    closes it at the end. Returns each call's result, or the exception it raised.
    """
    barrier = threading.Barrier(count)
    outcomes: list = [None] * count

    def run(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            outcomes[index] = action(index)
        except Exception as exc:  # the outcome is inspected by the test
            outcomes[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a racer never finished"
    return outcomes

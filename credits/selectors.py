"""Reads of the credit accounts: the month's summary, and the ledger audit."""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Sum
from django.utils import timezone

from credits.models import CreditAccount, LedgerEntry
from credits.money import credits_from_micros, current_month, micros_from_credits
from organizations.members import Member
from organizations.models import Organization


@dataclass(frozen=True)
class CreditsSummary:
    """An organization's month, in micros (exact) and whole credits (floored)."""

    month: str
    monthly_credits: int
    granted_micros: int
    used_micros: int
    reserved_micros: int

    @property
    def remaining_micros(self) -> int:
        return self.granted_micros - self.used_micros - self.reserved_micros

    @property
    def granted_credits(self) -> int:
        return credits_from_micros(self.granted_micros)

    @property
    def used_credits(self) -> int:
        return credits_from_micros(self.used_micros)

    @property
    def reserved_credits(self) -> int:
        return credits_from_micros(self.reserved_micros)

    @property
    def remaining_credits(self) -> int:
        return credits_from_micros(self.remaining_micros)


def credits_summary(member: Member, *, now: datetime | None = None) -> CreditsSummary:
    """The member's organization's account of the month, without writing.

    A month not opened yet (no turn, no grant) reads as it would open now: the
    organization's monthly allowance, nothing used or reserved. Reading never
    opens it, so a GET stays a read. At most two queries.
    """
    month = current_month(now or timezone.now())
    account = (
        CreditAccount.objects.select_related("organization")
        .filter(organization_id=member.organization_id, month=month)
        .first()
    )
    if account is None:
        allowance = Organization.objects.values_list("monthly_credits", flat=True).get(
            pk=member.organization_id
        )
        return CreditsSummary(month, allowance, micros_from_credits(allowance), 0, 0)
    return CreditsSummary(
        month=month,
        monthly_credits=account.organization.monthly_credits,
        granted_micros=account.granted_micros,
        used_micros=account.used_micros,
        reserved_micros=account.reserved_micros,
    )


# --- Audit ----------------------------------------------------------------------

AUDITED_FIELDS = {
    "granted_micros": "granted_delta",
    "used_micros": "used_delta",
    "reserved_micros": "reserved_delta",
}


@dataclass(frozen=True)
class AuditMismatch:
    account_id: int
    organization_slug: str
    month: str
    field: str
    stored: int
    derived: int

    def __str__(self):
        return (
            f"account {self.account_id} ({self.organization_slug} {self.month}): "
            f"{self.field} is {self.stored} but its ledger gives {self.derived}"
        )


def credits_audit_mismatches() -> list[AuditMismatch]:
    """Every account total that differs from the sum of its ledger's deltas.

    One aggregate query for the ledger and one for the accounts, whatever their number.
    """
    derived = _ledger_sums()
    mismatches = []
    accounts = CreditAccount.objects.select_related("organization").order_by(
        "organization__slug", "month", "id"
    )
    for account in accounts:
        sums = derived.get(account.pk, {})
        for field, delta in AUDITED_FIELDS.items():
            stored, expected = getattr(account, field), sums.get(delta) or 0
            if stored != expected:
                mismatches.append(
                    AuditMismatch(
                        account.pk, account.organization.slug, account.month, field, stored, expected
                    )
                )
    return mismatches


def _ledger_sums() -> dict[int, dict[str, int]]:
    # The aliases may not reuse the fields' names (Django refuses the clash).
    sums = {f"sum_{delta}": Sum(delta) for delta in AUDITED_FIELDS.values()}
    rows = LedgerEntry.objects.order_by().values("account_id").annotate(**sums)
    return {
        row["account_id"]: {delta: row[f"sum_{delta}"] for delta in AUDITED_FIELDS.values()} for row in rows
    }

"""Reads of the credit accounts: the month's summary, and the ledger audit."""

from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from credits.models import CreditAccount, LedgerEntry
from credits.money import credits_from_micros, current_month, micros_from_credits
from credits.services import member_cap_for, member_spent_in_month
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


@dataclass(frozen=True)
class PersonCredits:
    """The month as the person sees it under their cap: what their turns used
    and hold, and what they may still spend (never more than the organization
    has left)."""

    cap_micros: int
    spent_micros: int
    organization_remaining_micros: int

    @property
    def remaining_micros(self) -> int:
        return min(self.cap_micros - self.spent_micros, self.organization_remaining_micros)

    @property
    def cap_credits(self) -> int:
        return credits_from_micros(self.cap_micros)

    @property
    def spent_credits(self) -> int:
        return credits_from_micros(self.spent_micros)

    @property
    def remaining_credits(self) -> int:
        return credits_from_micros(self.remaining_micros)


def person_credits(member: Member, summary: CreditsSummary) -> PersonCredits | None:
    """None when the person has no cap (the organization's credits are theirs
    to use); else one query (two for a Member read without its terms)."""
    cap = member_cap_for(member)
    if cap is None:
        return None
    return PersonCredits(cap_micros=cap, spent_micros=member_spent_in_month(member, summary.month),
                         organization_remaining_micros=summary.remaining_micros)


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
    field: str  # an audited total, or OVERDRAWN
    stored: int
    derived: int

    def __str__(self):
        where = f"account {self.account_id} ({self.organization_slug} {self.month})"
        if self.field == OVERDRAWN:
            return f"{where}: overdrawn by {self.derived} micros after ledger entry {self.stored}"
        return f"{where}: {self.field} is {self.stored} but its ledger gives {self.derived}"


# The invariant broken at some moment of the ledger: used + reserved > granted.
OVERDRAWN = "overdrawn"


@dataclass
class _Replay:
    """An account's totals replayed entry by entry, and its first overdraft."""

    sums: dict[str, int]
    overdraft: tuple[int, int] | None = None  # (entry id, micros over)


def credits_audit_mismatches() -> list[AuditMismatch]:
    """Every account total that differs from the sum of its ledger's deltas,
    and every account whose ledger, replayed in order, ever had used +
    reserved above granted (at any moment, not only now).

    One query for the ledger (streamed) and one for the accounts, whatever their number.
    """
    replays = _replay_ledgers()
    mismatches = []
    accounts = CreditAccount.objects.select_related("organization").order_by(
        "organization__slug", "month", "id"
    )
    for account in accounts:
        replay = replays.get(account.pk) or _Replay(dict.fromkeys(AUDITED_FIELDS.values(), 0))
        where = (account.pk, account.organization.slug, account.month)
        for field, delta in AUDITED_FIELDS.items():
            stored, expected = getattr(account, field), replay.sums[delta]
            if stored != expected:
                mismatches.append(AuditMismatch(*where, field, stored, expected))
        if replay.overdraft is not None:
            mismatches.append(AuditMismatch(*where, OVERDRAWN, *replay.overdraft))
    return mismatches


def _replay_ledgers() -> dict[int, _Replay]:
    deltas = list(AUDITED_FIELDS.values())
    rows = LedgerEntry.objects.order_by("account_id", "id").values_list("account_id", "id", *deltas)
    replays: dict[int, _Replay] = {}
    for account_id, entry_id, *values in rows.iterator(chunk_size=2000):
        replay = replays.setdefault(account_id, _Replay(dict.fromkeys(deltas, 0)))
        for delta, value in zip(deltas, values, strict=True):
            replay.sums[delta] += value
        over = replay.sums["used_delta"] + replay.sums["reserved_delta"] - replay.sums["granted_delta"]
        if over > 0 and replay.overdraft is None:
            replay.overdraft = (entry_id, over)
    return replays

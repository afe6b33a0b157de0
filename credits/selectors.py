"""Reads of the credit accounts: the month's summary, and the ledger audit."""

from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.db.models import Sum
from django.utils import timezone

from assistant_engine.organizations.members import Member
from assistant_engine.organizations.models import Organization
from credits.days import CHARGING_KINDS, clamped
from credits.forecast import run_out_day
from credits.models import CreditAccount, DayUsage, LedgerEntry, MemberMonthUsage
from credits.money import credits_from_micros, current_month, micros_from_credits
from credits.services import member_cap_for, member_spent_in_month


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

    def run_out_on(self, now: datetime | None = None):
        """The day the month's grant runs out at the month's pace (used and held), or None."""
        return run_out_day(spent_micros=self.used_micros + self.reserved_micros, limit_micros=self.granted_micros,
                           month=self.month, now=now or timezone.now())


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
    month: str = ""

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

    def run_out_on(self, now: datetime | None = None):
        """The day the person reaches their cap at their month's pace, or None."""
        return run_out_day(spent_micros=self.spent_micros, limit_micros=self.cap_micros, month=self.month,
                           now=now or timezone.now())


def person_credits(member: Member, summary: CreditsSummary) -> PersonCredits | None:
    """None when the person has no cap (the organization's credits are theirs
    to use); else one query (two for a Member read without its terms)."""
    cap = member_cap_for(member)
    if cap is None:
        return None
    return PersonCredits(cap_micros=cap, spent_micros=member_spent_in_month(member, summary.month),
                         organization_remaining_micros=summary.remaining_micros, month=summary.month)


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


# A person's month totals (MemberMonthUsage), and what their ledger rows give.
USAGE_FIELDS = ("turns", "used_micros", "reserved_micros")
# An account's day totals (DayUsage): their mismatches are named "day …".
DAY_FIELDS = ("turns", "used_micros")


@dataclass
class _Replay:
    """An account's totals replayed entry by entry, its first overdraft, and
    the month totals of each person (None: erased) who started turns in it."""

    sums: dict[str, int]
    overdraft: tuple[int, int] | None = None  # (entry id, micros over)
    usage: dict[int | None, list[int]] = field(default_factory=dict)  # person: turns, used, reserved
    # (the close's UTC day, model, door): turns, used; of the charging closes (credits/days.py).
    days: dict[tuple, list[int]] = field(default_factory=dict)


def credits_audit_mismatches() -> list[AuditMismatch]:
    """Every account total that differs from the sum of its ledger's deltas,
    every account whose ledger, replayed in order, ever had used +
    reserved above granted (at any moment, not only now), every person's
    month totals and every day total that differ from their turns' ledger rows.

    One query for the ledger (streamed), one for the accounts, one for the
    people's totals and one for the day totals, whatever their number.
    """
    replays = _replay_ledgers()
    usages = _stored_usage()
    days = _stored_days()
    mismatches = []
    accounts = CreditAccount.objects.select_related("organization").order_by(
        "organization__slug", "month", "id"
    )
    for account in accounts:
        replay = replays.get(account.pk) or _Replay(dict.fromkeys(AUDITED_FIELDS.values(), 0))
        where = (account.pk, account.organization.slug, account.month)
        for name, delta in AUDITED_FIELDS.items():
            stored, expected = getattr(account, name), replay.sums[delta]
            if stored != expected:
                mismatches.append(AuditMismatch(*where, name, stored, expected))
        if replay.overdraft is not None:
            mismatches.append(AuditMismatch(*where, OVERDRAWN, *replay.overdraft))
        mismatches += _usage_mismatches(where, usages.get(account.pk, {}), replay.usage)
        mismatches += _day_mismatches(where, days.get(account.pk, {}), replay.days)
    return mismatches


def _day_mismatches(where: tuple, stored: dict, closes: dict) -> list[AuditMismatch]:
    derived: dict[tuple, list[int]] = {}
    for (on, model, door), (turns, used) in closes.items():
        totals = derived.setdefault((clamped(on, where[2]), model, door), [0, 0])
        totals[0] += turns
        totals[1] += used
    mismatches = []
    for key in sorted(stored.keys() | derived.keys()):
        day, model, door = key
        for name, have, want in zip(DAY_FIELDS, stored.get(key, [0, 0]), derived.get(key, [0, 0]), strict=True):
            if have != want:
                mismatches.append(AuditMismatch(*where, f"day {day} {model or '-'} {door or '-'} {name}", have, want))
    return mismatches


def _stored_days() -> dict[int, dict[tuple, list[int]]]:
    stored: dict[int, dict[tuple, list[int]]] = {}
    for account_id, day, model, door, turns, used in DayUsage.objects.values_list(
            "account_id", "day", "model", "door", "turns", "used_micros").iterator(chunk_size=2000):
        stored.setdefault(account_id, {})[(day, model, door)] = [turns, used]
    return stored


def _usage_mismatches(where: tuple, stored: dict, derived: dict) -> list[AuditMismatch]:
    mismatches = []
    for person in sorted(stored.keys() | derived.keys(), key=lambda person: (person is None, person or 0)):
        whose = f"of user {person}" if person is not None else "of erased people"
        for name, have, want in zip(USAGE_FIELDS, stored.get(person, [0, 0, 0]), derived.get(person, [0, 0, 0]),
                                    strict=True):
            if have != want:
                mismatches.append(AuditMismatch(*where, f"{name} {whose}", have, want))
    return mismatches


def _stored_usage() -> dict[int, dict[int | None, list[int]]]:
    """The people's month totals per account (an account's rows of no one summed)."""
    rows = MemberMonthUsage.objects.values("account_id", "user_id").annotate(
        turns=Sum("turns"), used=Sum("used_micros"), reserved=Sum("reserved_micros")).order_by()
    stored: dict[int, dict[int | None, list[int]]] = {}
    for row in rows:
        stored.setdefault(row["account_id"], {})[row["user_id"]] = [row["turns"], row["used"], row["reserved"]]
    return stored


def _replay_ledgers() -> dict[int, _Replay]:
    deltas = list(AUDITED_FIELDS.values())
    rows = LedgerEntry.objects.order_by("account_id", "id").values_list(
        "account_id", "id", "kind", "turn_id", "actor_id", "created_at", "model", "door", *deltas)
    replays: dict[int, _Replay] = {}
    people: dict = {}  # the current account's turns: who started each (its reserve entry comes first)
    for account_id, entry_id, kind, turn_id, actor_id, at, model, door, *values in rows.iterator(chunk_size=2000):
        if account_id not in replays:
            people = {}
        replay = replays.setdefault(account_id, _Replay(dict.fromkeys(deltas, 0)))
        for delta, value in zip(deltas, values, strict=True):
            replay.sums[delta] += value
        over = replay.sums["used_delta"] + replay.sums["reserved_delta"] - replay.sums["granted_delta"]
        if over > 0 and replay.overdraft is None:
            replay.overdraft = (entry_id, over)
        if turn_id is not None:
            if kind == LedgerEntry.Kind.RESERVE:
                people[turn_id] = actor_id
            usage = replay.usage.setdefault(people.get(turn_id), [0, 0, 0])
            usage[0] += kind == LedgerEntry.Kind.RESERVE
            usage[1] += values[deltas.index("used_delta")]
            usage[2] += values[deltas.index("reserved_delta")]
        if kind in CHARGING_KINDS:
            day = replay.days.setdefault((at.astimezone(UTC).date(), model, door), [0, 0])
            day[0] += 1
            day[1] += values[deltas.index("used_delta")]
    return replays

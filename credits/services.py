"""Movements of the credit accounts: reserve, settle, keep-on-stuck, release,
grant, and the per-person monthly caps they check.

Each one writes through the ledger's one write (credits/ledger.py, where
the lock order is explained): the account's row last, by one conditional UPDATE.

Each service works alone (its own transaction) and inside a caller's
`transaction.atomic()` (a savepoint: a refusal then rolls back only what the
service did, and the caller's own rollback takes the reservation with it).
The closing services take no savepoint (they refuse before writing, and within
finish_turn they commit or roll back with the turn), nor does
`credits_reserve(savepoint=False)`, for a caller that ends on a refusal.
"""

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from assistant_engine.organizations.members import Member, cap_that_applies
from assistant_engine.organizations.models import Membership, Organization, OrganizationChange
from assistant_engine.organizations.services import change_record
from credits import alerts
from credits.ledger import (
    Overdraft,
    ReservationNotFound,
    account_of_month,
    holds_of,
    lock_turn,
    record,
    reserve_entry,
)
from credits.models import CreditAccount, LedgerEntry, MemberMonthUsage
from credits.money import current_month, micros_from_credits

Kind = LedgerEntry.Kind


class CreditsExhausted(Exception):
    """The organization's month cannot cover a turn's reservation; nothing was written."""

    def __init__(self, *, month: str, remaining_micros: int, needed_micros: int):
        self.month = month
        self.remaining_micros = remaining_micros
        self.needed_micros = needed_micros
        super().__init__(
            f"The organization's credits for {month} are exhausted: "
            f"{remaining_micros} micros left, a turn needs {needed_micros}."
        )


class MemberCapReached(CreditsExhausted):
    """The person's monthly cap in this organization cannot cover the
    reservation (the organization may still have credits); nothing was written."""

    def __init__(self, *, month: str, cap_micros: int, spent_micros: int, needed_micros: int):
        self.month = month
        self.cap_micros = cap_micros
        self.spent_micros = spent_micros
        self.needed_micros = needed_micros
        Exception.__init__(
            self, f"The person's cap for {month} is reached: {spent_micros} of {cap_micros} micros "
            f"used or held, {needed_micros} more needed."
        )


@dataclass(frozen=True)
class Reservation:
    month: str  # YYYY-MM: the account that holds it, and that its turn settles against
    micros: int


def reservation_micros() -> int:
    """The amount held at turn start (settings.CREDITS_RESERVATION credits)."""
    return micros_from_credits(settings.CREDITS_RESERVATION)


# --- Reserve ------------------------------------------------------------------


def planned_reservation(now: datetime) -> Reservation:
    """What credits_reserve at `now` holds, for a caller that writes it on its
    turn before reserving (so the reservation is its transaction's last write)."""
    return Reservation(month=current_month(now), micros=reservation_micros())


def credits_reserve(
    member: Member, *, turn_id: UUID, now: datetime | None = None, savepoint: bool = True, fresh: bool = False,
    model: str = "", door: str = "",
) -> Reservation:
    """Take a turn's reservation from the organization's account of the month.

    Opens the month's account if needed. Raises CreditsExhausted (or
    MemberCapReached), the caller's transaction to roll back what it wrote,
    when the balance (or the person's cap) does not cover the reservation.
    Reserving the same turn again returns its existing reservation.

    Call it LAST in the transaction that creates the turn: its last statement
    locks the organization's account row until that transaction ends (every
    turn of the organization waits on that row: issue 36.3), and a rollback
    there undoes the reservation. `savepoint=False` saves two queries for a
    caller whose transaction ends with a refusal anyway (it must not catch it
    and go on). `fresh=True` saves one, the look for an earlier reservation of
    the turn, for a caller that made `turn_id` itself just now (uuid4: none can
    exist). `model` and `door` (a credits.models.Door): the turn's model option
    and the door it came through, recorded for its close to add to the day's totals.
    """
    now = now or timezone.now()
    planned = planned_reservation(now)
    with transaction.atomic(savepoint=savepoint):
        account_id = account_of_month(member.organization_id, planned.month, now=now, actor_id=member.user_id)
        existing = None if fresh else reserve_entry(turn_id)
        if existing is not None:
            return Reservation(month=existing.account.month, micros=existing.reserved_delta)
        # The cap itself may come from the request's guard (a setting, not a
        # counter: the race is on the spending, which the person's totals
        # upsert returns under that row's lock).
        cap = member_cap_for(member)
        _hold(account_id, planned.month, member.user_id, planned.micros, cap, kind=Kind.RESERVE, now=now,
              turn_id=turn_id, actor_id=member.user_id, reason="turn start", model=model, door=door)
    return planned


def _hold(account_id: int, month: str, person_id: int | None, micros: int, cap: int | None, **movement) -> None:
    """A start reservation or a hold before a call: refused when the person's
    cap or the account can't cover it.

    Race: two concurrent starts (or holds) of one organization both finding
    room for one more. The account's UPDATE checks the balance on its row's
    latest version, one writer after the other. Race: one person's starts in
    several conversations at once each passing their cap: the person's totals
    row is locked by its upsert, so each reads the spending of the one before.
    """
    def within_cap(spent: int) -> None:
        if cap is not None and person_id is not None:
            check_member_cap(account_id, month, person_id, spent_before=spent - micros, needed_micros=micros,
                             cap_micros=cap)

    try:
        record(account_id, person_id=person_id, reserved_delta=micros, month=month, spent_check=within_cap,
               needs_room=True, **movement)
    except Overdraft:
        remaining = CreditAccount.objects.get(pk=account_id).remaining_micros  # for the message only
        raise CreditsExhausted(month=month, remaining_micros=remaining, needed_micros=micros) from None


def credits_reserve_more(*, turn_id: UUID, micros: int, job: str = "run_turn") -> int:
    """Hold `micros` more for a running turn (before a model call whose upper
    bound its reservation does not cover); returns what the turn now holds.

    Raises CreditsExhausted, having written nothing, when the balance can't
    cover it. The month is the one that holds the turn's first reservation.
    """
    if micros <= 0:
        raise ValueError(f"micros must be positive, got {micros}")
    now = timezone.now()
    with transaction.atomic():
        # Race: the turn's hold while a sweeper closes it: under the turn's
        # lock, a hold of a closed turn is refused.
        account_id, month, organization_id = lock_turn(turn_id)
        held, closed, person_id, model, door = holds_of(turn_id)
        if closed:
            raise ReservationNotFound(f"turn {turn_id} is already closed")
        # Read again at every hold: an admin may have lowered the cap since the turn started.
        cap = None if person_id is None else member_cap_micros(organization_id, person_id)
        _hold(account_id, month, person_id, micros, cap, kind=Kind.EXTEND, now=now, turn_id=turn_id, job=job,
              reason="upper bound of the next model call", model=model, door=door)
    return held + micros


# --- Close a turn: settle, keep on stuck, release ----------------------------


def credits_settle(
    *, turn_id: UUID, cost_micros: int, charged_micros: int | None = None, job: str = "run_turn",
    now: datetime | None = None,
) -> bool:
    """Charge a finished turn's real cost and release its reservation.

    Settles against the month that holds the reservation, even if a new month
    has opened since. A cost above what the account can hold (only possible
    if a provider billed more than the call's reserved upper bound) is charged
    up to the balance, and the rest named in the entry's reason: the account
    is never overdrawn. Returns False, moving nothing, if the turn was already
    closed.

    `charged_micros`, when given, is what is charged for that cost (a turn on
    the organization's own key: CREDITS_OWN_KEY_RATE of it); the entry's
    reason keeps the provider cost.
    """
    if cost_micros < 0:
        raise ValueError(f"cost_micros must not be negative, got {cost_micros}")
    if charged_micros is None:
        return _close_turn(turn_id, kind=Kind.SETTLE, cost_micros=cost_micros, job=job, reason="turn cost", now=now)
    return _close_turn(turn_id, kind=Kind.SETTLE, cost_micros=charged_micros, job=job, now=now,
                       reason=f"turn on the organization's own key, provider cost {cost_micros} micros, charged")


def credits_keep_on_stuck(*, turn_id: UUID, job: str = "fail_stuck_turns", now: datetime | None = None) -> bool:
    """A turn that never finished keeps its reservation as its cost."""
    return _close_turn(turn_id, kind=Kind.STUCK, cost_micros=None, job=job, reason="turn never finished", now=now)


def credits_release(*, turn_id: UUID, reason: str, job: str = "") -> bool:
    """Give a turn's reservation back at no cost (no model call was ever made)."""
    return _close_turn(turn_id, kind=Kind.RELEASE, cost_micros=0, job=job, reason=reason)


def _close_turn(turn_id: UUID, *, kind: str, cost_micros: int | None, job: str, reason: str,
                now: datetime | None = None) -> bool:
    """Write the turn's one closing entry. `cost_micros=None` charges the reservation.

    No savepoint of its own (two queries less per turn): it raises nothing
    once it has written, and inside finish_turn's transaction it must commit
    or roll back with the turn anyway. `now` (tests, scripts): when it closes,
    which decides its day in the day totals.
    """
    now = now or timezone.now()
    with transaction.atomic(savepoint=False):
        # Race: a worker settling a turn while the stuck-turn sweeper (or a
        # redelivered task) closes the same one. Under the turn's lock the
        # second closer sees the first's entry and moves nothing; the partial
        # unique constraint on (turn_id, closing kinds) is the backstop.
        account_id, month, _ = lock_turn(turn_id)
        held, closed, person_id, model, door = holds_of(turn_id)
        if closed:
            return False
        cost = held if cost_micros is None else cost_micros
        close = {"kind": kind, "now": now, "turn_id": turn_id, "person_id": person_id, "reserved_delta": -held,
                 "job": job, "model": model, "door": door, "month": month}
        if cost <= held:  # releasing the hold makes room for it: the account takes it whole
            record(account_id, used_delta=cost, **close,
                   reason=f"{reason}: cost {cost} micros, reservation {held} micros released")
            return True
        _close_above_hold(account_id, cost, held, reason, close)
    return True


def _close_above_hold(account_id: int, cost: int, held: int, reason: str, close: dict) -> None:
    """A cost above the turn's hold (a provider billed more than the call's
    reserved upper bound): charged up to what the account can take once the
    hold is released, never more. The balance is read unlocked; if other
    turns took the room before this close's UPDATE, it is written again (a
    savepoint) against the balance read anew."""
    while True:
        account = CreditAccount.objects.get(pk=account_id)
        charged = min(cost, account.remaining_micros + held)
        note = f" ({cost - charged} micros above the balance not charged)" if charged < cost else ""
        try:
            with transaction.atomic():
                record(account_id, used_delta=charged, **close,
                       reason=f"{reason}: cost {charged} micros, reservation {held} micros released{note}")
            return
        except Overdraft:
            continue


# --- Per-person monthly caps ------------------------------------------------------


def member_cap_micros(organization_id: int, user_id: int) -> int | None:
    """The person's monthly cap in micros (their own, else the organization's
    default), or None for no cap. One query."""
    caps = Membership.objects.filter(organization_id=organization_id, user_id=user_id).values_list(
        "monthly_cap_credits", "organization__default_member_cap_credits"
    ).first()
    if caps is None:
        return None
    own, default = caps
    return _micros_or_none(cap_that_applies(own, default))


def _micros_or_none(credits: int | None) -> int | None:
    return None if credits is None else micros_from_credits(credits)


def member_cap_for(member: Member) -> int | None:
    """The cap in micros of the request's person: the one the guard read with
    the membership (no query), or, for a Member made without it (a worker, a
    script, a test), the row's (one query)."""
    if member.terms is None:
        return member_cap_micros(member.organization_id, member.user_id)
    return _micros_or_none(member.terms.cap_credits)


def member_spent_micros(account_id: int, user_id: int) -> int:
    """Used plus reserved in this account by the turns this person started
    (the actor of each turn's start reservation). One query."""
    return _spent(user_id, account_id=account_id)


def member_spent_in_month(member: Member, month: str) -> int:
    """As member_spent_micros, in the member's organization's account of `month`
    (0 when it is not opened). One query."""
    return _spent(member.user_id, account__organization_id=member.organization_id, account__month=month)


def _spent(user_id: int, **account) -> int:
    """The person's row of month totals (kept by the ledger's write): one row,
    not a sum of the organization's ledger."""
    spent = MemberMonthUsage.objects.filter(**account, user_id=user_id).values_list(
        F("used_micros") + F("reserved_micros"), flat=True
    ).first()
    return spent or 0


def check_member_cap(account_id: int, month: str, user_id: int, *, spent_before: int, needed_micros: int,
                     cap_micros: int) -> None:
    """Raise MemberCapReached unless the person's cap covers `needed_micros`
    more than `spent_before`, their spending read under their totals row's
    lock (see credits.ledger.record)."""
    if spent_before + needed_micros > cap_micros:
        raise MemberCapReached(month=month, cap_micros=cap_micros, spent_micros=spent_before,
                               needed_micros=needed_micros)
    alerts.after_person_hold(account_id, user_id, spent_before, spent_before + needed_micros, cap_micros)


# --- Grant ----------------------------------------------------------------------

# One grant's ceiling (USD 100,000). Far below what the 64-bit micro-dollar
# columns hold, so a typo of extra digits is refused instead of overflowing them.
MAX_GRANT_CREDITS = 10_000_000


def credits_grant(
    *, organization: Organization, credits: int, staff_user, reason: str, now: datetime | None = None
) -> LedgerEntry:
    """Add `credits` to the organization's account of the month, naming the staff member."""
    check_grant(credits=credits, staff_user=staff_user, reason=reason)
    now = now or timezone.now()
    with transaction.atomic():
        # Race: a grant and a turn start both rewriting the same account's
        # totals: the ledger's one UPDATE adds to the row's latest version.
        account_id = account_of_month(organization.pk, current_month(now), now=now, actor_id=staff_user.pk)
        entry = record(
            account_id,
            kind=Kind.GRANT,
            now=now,
            granted_delta=micros_from_credits(credits),
            actor_id=staff_user.pk,
            reason=reason.strip(),
        )
        # The organization's own log says it too (its admins read it on their page).
        change_record(organization_id=organization.pk, actor_id=staff_user.pk,
                      action=OrganizationChange.Kind.CREDITS_GRANTED, detail=f"{credits} credits: {reason.strip()}")
    return entry


def check_grant(*, credits: int, staff_user, reason: str) -> None:
    if not getattr(staff_user, "is_staff", False):
        raise PermissionDenied("Only staff members grant credits.")
    if credits <= 0:
        raise ValueError(f"A grant must be at least one credit, got {credits}")
    if credits > MAX_GRANT_CREDITS:
        raise ValueError(f"A grant is at most {MAX_GRANT_CREDITS:,} credits, got {credits:,}")
    if not reason or not reason.strip():
        raise ValueError("A grant needs a reason.")

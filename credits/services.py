"""Movements of the credit accounts: reserve, settle, keep-on-stuck, release,
grant, and the per-person monthly caps they check.

Each one locks its account and writes through the ledger's one write
(credits/ledger.py, where the locking is explained).

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
    ReservationNotFound,
    holds_of,
    locked_account,
    locked_account_of_turn,
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


def credits_reserve(
    member: Member, *, turn_id: UUID, now: datetime | None = None, savepoint: bool = True, fresh: bool = False,
    model: str = "", door: str = "",
) -> Reservation:
    """Take a turn's reservation from the organization's account of the month.

    Opens the month's account if needed. Raises CreditsExhausted, having written
    nothing, when the balance does not cover the reservation. Reserving the same
    turn again returns its existing reservation.

    Call it inside the transaction that creates the turn: the account row stays
    locked until that transaction ends, and a rollback there undoes the
    reservation. `savepoint=False` saves two queries for a caller whose
    transaction ends with a refusal anyway (it must not catch it and go on).
    `fresh=True` saves one, the look for an earlier reservation of the turn,
    for a caller that made `turn_id` itself just now (uuid4: none can exist).
    `model` and `door` (a credits.models.Door): the turn's model option and
    the door it came through, recorded for its close to add to the day's totals.
    """
    now = now or timezone.now()
    needed = reservation_micros()
    with transaction.atomic(savepoint=savepoint):
        # Race: two concurrent turn starts both reading the same balance, both
        # finding room for one more reservation, and both taking it. The row
        # lock makes the second one read the balance after the first's write.
        account = locked_account(
            member.organization_id, current_month(now), now=now, actor_id=member.user_id
        )
        existing = None if fresh else reserve_entry(turn_id)
        if existing is not None:
            return Reservation(month=existing.account.month, micros=existing.reserved_delta)
        check_covers(account, needed)
        # Under the same account lock: one person's concurrent starts (and the
        # holds of their running turns) read their spending one after another.
        # The cap itself may come from the request's guard (a setting, not a
        # counter: the race is on the spending, read here under the lock).
        check_member_cap(account, member.user_id, needed, cap_micros=member_cap_for(member))
        record(
            account,
            kind=Kind.RESERVE,
            now=now,
            turn_id=turn_id,
            person_id=member.user_id,
            reserved_delta=needed,
            actor_id=member.user_id,
            reason="turn start",
            model=model,
            door=door,
        )
    return Reservation(month=account.month, micros=needed)


def check_covers(account: CreditAccount, needed_micros: int) -> None:
    """Raise CreditsExhausted unless the account can hold `needed_micros` more.

    An account with nothing left starts no turn, even with a zero reservation.
    """
    remaining = account.remaining_micros
    if remaining < needed_micros or remaining <= 0:
        raise CreditsExhausted(month=account.month, remaining_micros=remaining, needed_micros=needed_micros)


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
        # Race: the many-step turns of one organization each finding room for
        # their next call in the same balance. Under the row lock each one
        # reads the balance after the previous one's hold.
        account = locked_account_of_turn(turn_id)
        held, closed, person_id, model, door = holds_of(turn_id)
        if closed:
            raise ReservationNotFound(f"turn {turn_id} is already closed")
        check_covers(account, micros)
        if person_id is not None:
            # Read again at every hold: an admin may have lowered the cap since the turn started.
            check_member_cap(account, person_id, micros,
                             cap_micros=member_cap_micros(account.organization_id, person_id))
        record(account, kind=Kind.EXTEND, now=now, turn_id=turn_id, person_id=person_id, reserved_delta=micros, job=job,
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
        # redelivered task) closes the same one. Under the lock the second
        # closer sees the first's entry and moves nothing; the partial unique
        # constraint on (turn_id, closing kinds) is the backstop.
        account = locked_account_of_turn(turn_id)
        held, closed, person_id, model, door = holds_of(turn_id)
        if closed:
            return False
        cost = held if cost_micros is None else cost_micros
        # What the account can take once the hold is released: never more.
        charged = min(cost, account.granted_micros - account.used_micros - (account.reserved_micros - held))
        note = f" ({cost - charged} micros above the balance not charged)" if charged < cost else ""
        record(
            account,
            kind=kind,
            now=now,
            turn_id=turn_id,
            person_id=person_id,
            used_delta=charged,
            reserved_delta=-held,
            job=job,
            reason=f"{reason}: cost {charged} micros, reservation {held} micros released{note}",
            model=model,
            door=door,
        )
    return True


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


def check_member_cap(account: CreditAccount, user_id: int, needed_micros: int, *, cap_micros: int | None) -> None:
    """Raise MemberCapReached unless the person's cap (`cap_micros`, None: no
    cap) covers `needed_micros` more. Call it under the account's lock: the
    spending is read here (see credits_reserve)."""
    if cap_micros is None:
        return
    spent = member_spent_micros(account.pk, user_id)
    if spent + needed_micros > cap_micros:
        raise MemberCapReached(month=account.month, cap_micros=cap_micros, spent_micros=spent,
                               needed_micros=needed_micros)
    alerts.after_person_hold(account, user_id, spent, spent + needed_micros, cap_micros)


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
        # Race: a grant and a turn start both rewriting the same account's totals.
        account = locked_account(organization.pk, current_month(now), now=now, actor_id=staff_user.pk)
        entry = record(
            account,
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

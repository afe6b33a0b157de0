"""Writes to the credit accounts: open, reserve, settle, keep-on-stuck, release, grant.

Every movement locks its account row (`select_for_update`) inside
`transaction.atomic()`, checks, then writes the account and one ledger row in
that same transaction. On PostgreSQL the row lock serializes the writers of one
account; on SQLite `select_for_update` is a no-op, but the settings open every
transaction with BEGIN IMMEDIATE, which takes the database's write lock at
BEGIN, so two writers can never both read a balance before either writes it.

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
from django.db import IntegrityError, transaction
from django.db.models import F, Sum
from django.utils import timezone

from credits.models import CreditAccount, LedgerEntry
from credits.money import current_month, micros_from_credits
from organizations.members import Member, cap_that_applies
from organizations.models import Membership, Organization

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


class Overdraft(RuntimeError):
    """A movement would leave used + reserved above granted (a programming error:
    every caller checks the balance first, under the account's lock)."""


class ReservationNotFound(LookupError):
    """A turn is being closed that was never reserved (a programming error)."""


@dataclass(frozen=True)
class Reservation:
    month: str  # YYYY-MM: the account that holds it, and that its turn settles against
    micros: int


def reservation_micros() -> int:
    """The amount held at turn start (settings.CREDITS_RESERVATION credits)."""
    return micros_from_credits(settings.CREDITS_RESERVATION)


# --- Reserve ------------------------------------------------------------------


def credits_reserve(
    member: Member, *, turn_id: UUID, now: datetime | None = None, savepoint: bool = True, fresh: bool = False
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
    """
    now = now or timezone.now()
    needed = reservation_micros()
    with transaction.atomic(savepoint=savepoint):
        # Race: two concurrent turn starts both reading the same balance, both
        # finding room for one more reservation, and both taking it. The row
        # lock makes the second one read the balance after the first's write.
        account = _locked_account(
            member.organization_id, current_month(now), now=now, actor_id=member.user_id
        )
        existing = None if fresh else _reserve_entry(turn_id)
        if existing is not None:
            return Reservation(month=existing.account.month, micros=existing.reserved_delta)
        check_covers(account, needed)
        # Under the same account lock: one person's concurrent starts (and the
        # holds of their running turns) read their spending one after another.
        # The cap itself may come from the request's guard (a setting, not a
        # counter: the race is on the spending, read here under the lock).
        check_member_cap(account, member.user_id, needed, cap_micros=member_cap_for(member))
        _record(
            account,
            kind=Kind.RESERVE,
            now=now,
            turn_id=turn_id,
            reserved_delta=needed,
            actor_id=member.user_id,
            reason="turn start",
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
        account = _locked_account_of_turn(turn_id)
        held, closed, person_id = _holds_of(turn_id)
        if closed:
            raise ReservationNotFound(f"turn {turn_id} is already closed")
        check_covers(account, micros)
        if person_id is not None:
            # Read again at every hold: an admin may have lowered the cap since the turn started.
            check_member_cap(account, person_id, micros,
                             cap_micros=member_cap_micros(account.organization_id, person_id))
        _record(account, kind=Kind.EXTEND, now=now, turn_id=turn_id, reserved_delta=micros, job=job,
                reason="upper bound of the next model call")
    return held + micros


# --- Close a turn: settle, keep on stuck, release ----------------------------


def credits_settle(
    *, turn_id: UUID, cost_micros: int, charged_micros: int | None = None, job: str = "run_turn"
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
        return _close_turn(turn_id, kind=Kind.SETTLE, cost_micros=cost_micros, job=job, reason="turn cost")
    return _close_turn(turn_id, kind=Kind.SETTLE, cost_micros=charged_micros, job=job,
                       reason=f"turn on the organization's own key, provider cost {cost_micros} micros, charged")


def credits_keep_on_stuck(*, turn_id: UUID, job: str = "fail_stuck_turns") -> bool:
    """A turn that never finished keeps its reservation as its cost."""
    return _close_turn(turn_id, kind=Kind.STUCK, cost_micros=None, job=job, reason="turn never finished")


def credits_release(*, turn_id: UUID, reason: str, job: str = "") -> bool:
    """Give a turn's reservation back at no cost (no model call was ever made)."""
    return _close_turn(turn_id, kind=Kind.RELEASE, cost_micros=0, job=job, reason=reason)


def _close_turn(turn_id: UUID, *, kind: str, cost_micros: int | None, job: str, reason: str) -> bool:
    """Write the turn's one closing entry. `cost_micros=None` charges the reservation.

    No savepoint of its own (two queries less per turn): it raises nothing
    once it has written, and inside finish_turn's transaction it must commit
    or roll back with the turn anyway.
    """
    now = timezone.now()
    with transaction.atomic(savepoint=False):
        # Race: a worker settling a turn while the stuck-turn sweeper (or a
        # redelivered task) closes the same one. Under the lock the second
        # closer sees the first's entry and moves nothing; the partial unique
        # constraint on (turn_id, closing kinds) is the backstop.
        account = _locked_account_of_turn(turn_id)
        held, closed, _person = _holds_of(turn_id)
        if closed:
            return False
        cost = held if cost_micros is None else cost_micros
        # What the account can take once the hold is released: never more.
        charged = min(cost, account.granted_micros - account.used_micros - (account.reserved_micros - held))
        note = f" ({cost - charged} micros above the balance not charged)" if charged < cost else ""
        _record(
            account,
            kind=kind,
            now=now,
            turn_id=turn_id,
            used_delta=charged,
            reserved_delta=-held,
            job=job,
            reason=f"{reason}: cost {charged} micros, reservation {held} micros released{note}",
        )
    return True


def _locked_account_of_turn(turn_id: UUID) -> CreditAccount:
    """The account holding the turn's reservation, locked (needs a transaction)."""
    account = (
        CreditAccount.objects.select_for_update(of=("self",))
        .filter(entries__turn_id=turn_id, entries__kind=Kind.RESERVE)
        .first()
    )
    if account is None:
        raise ReservationNotFound(f"turn {turn_id} has no reservation")
    return account


def _holds_of(turn_id: UUID) -> tuple[int, bool, int | None]:
    """(micros the turn holds, whether it is closed, the person who started
    it: the actor of its start reservation), in one query: its start
    reservation plus every hold taken before a call, minus nothing until closed."""
    entries = LedgerEntry.objects.filter(turn_id=turn_id, kind__in=LedgerEntry.TURN_KINDS).values_list(
        "kind", "reserved_delta", "actor_id"
    )
    held, closed, person = 0, False, None
    for kind, delta, actor in entries:
        if kind in LedgerEntry.CLOSING_KINDS:
            closed = True
        else:
            held += delta
        if kind == Kind.RESERVE:
            person = actor
    return held, closed, person


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
    turns = LedgerEntry.objects.filter(**account, kind=Kind.RESERVE, actor_id=user_id).values("turn_id")
    total = LedgerEntry.objects.filter(**account, turn_id__in=turns).aggregate(
        spent=Sum(F("used_delta") + F("reserved_delta"))
    )["spent"]
    return total or 0


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
        account = _locked_account(organization.pk, current_month(now), now=now, actor_id=staff_user.pk)
        return _record(
            account,
            kind=Kind.GRANT,
            now=now,
            granted_delta=micros_from_credits(credits),
            actor_id=staff_user.pk,
            reason=reason.strip(),
        )


def check_grant(*, credits: int, staff_user, reason: str) -> None:
    if not getattr(staff_user, "is_staff", False):
        raise PermissionDenied("Only staff members grant credits.")
    if credits <= 0:
        raise ValueError(f"A grant must be at least one credit, got {credits}")
    if credits > MAX_GRANT_CREDITS:
        raise ValueError(f"A grant is at most {MAX_GRANT_CREDITS:,} credits, got {credits:,}")
    if not reason or not reason.strip():
        raise ValueError("A grant needs a reason.")


# --- Accounts -------------------------------------------------------------------


def _locked_account(
    organization_id: int, month: str, *, now: datetime, actor_id: int | None
) -> CreditAccount:
    """The month's account, locked for this transaction; opened first if needed.

    Needs an open transaction (the lock lasts until it ends).
    """
    accounts = CreditAccount.objects.select_for_update()
    account = accounts.filter(organization_id=organization_id, month=month).first()
    if account is not None:
        return account
    _open_account(organization_id, month, now=now, actor_id=actor_id)
    return accounts.get(organization_id=organization_id, month=month)


def _open_account(organization_id: int, month: str, *, now: datetime, actor_id: int | None) -> None:
    """Open the month with the organization's allowance at this moment, once.

    Race: two first requests of a month both finding no account and both
    opening one. The unique (organization, month) constraint lets only one
    insert win; the other's savepoint rolls back and it reads the winner's row
    (PostgreSQL makes it wait for the winner's commit on the unique index).
    """
    allowance = Organization.objects.values_list("monthly_credits", flat=True).get(pk=organization_id)
    try:
        with transaction.atomic():
            account = CreditAccount.objects.create(
                organization_id=organization_id, month=month, opened_at=now, updated_at=now
            )
            _record(
                account,
                kind=Kind.OPEN,
                now=now,
                granted_delta=micros_from_credits(allowance),
                actor_id=actor_id,
                reason=f"monthly allowance of {allowance} credits",
            )
    except IntegrityError:
        pass


def _reserve_entry(turn_id: UUID) -> LedgerEntry | None:
    return LedgerEntry.objects.select_related("account").filter(turn_id=turn_id, kind=Kind.RESERVE).first()


def _record(
    account: CreditAccount,
    *,
    kind: str,
    now: datetime,
    turn_id: UUID | None = None,
    granted_delta: int = 0,
    used_delta: int = 0,
    reserved_delta: int = 0,
    actor_id: int | None = None,
    job: str = "",
    reason: str = "",
) -> LedgerEntry:
    """Apply deltas to a locked account and write the ledger row that explains them.

    The one place totals change, so the invariant used + reserved <= granted
    is checked here, before anything is written.
    """
    if account.used_micros + used_delta + account.reserved_micros + reserved_delta > (
        account.granted_micros + granted_delta
    ):
        raise Overdraft(f"a {kind} movement would overdraw account {account.pk}")
    account.granted_micros += granted_delta
    account.used_micros += used_delta
    account.reserved_micros += reserved_delta
    account.updated_at = now
    account.save(update_fields=["granted_micros", "used_micros", "reserved_micros", "updated_at"])
    return LedgerEntry.objects.create(
        account=account,
        kind=kind,
        turn_id=turn_id,
        granted_delta=granted_delta,
        used_delta=used_delta,
        reserved_delta=reserved_delta,
        actor_id=actor_id,
        job=job,
        reason=reason,
        created_at=now,
    )

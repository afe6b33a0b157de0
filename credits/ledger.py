"""The ledger's one write, and the account locks it needs.

Every movement locks its account row (`select_for_update`) inside
`transaction.atomic()`, checks, then writes the account, one ledger row and,
for a turn's row, the person's month totals (MemberMonthUsage) in that same
transaction. On PostgreSQL the row lock serializes the writers of one account;
on SQLite `select_for_update` is a no-op, but the settings open every
transaction with BEGIN IMMEDIATE, which takes the database's write lock at
BEGIN, so two writers can never both read a balance before either writes it.

The services that decide what to write (reserve, settle, grant…) are in
credits/services.py.
"""

from datetime import datetime
from typing import NamedTuple
from uuid import UUID

from django.db import IntegrityError, connection, transaction
from django.db.models import Count, F, OuterRef, Subquery, Sum

from assistant_engine.organizations.models import Organization
from credits import alerts, days
from credits.models import CreditAccount, LedgerEntry, MemberMonthUsage
from credits.money import micros_from_credits

Kind = LedgerEntry.Kind


class Overdraft(RuntimeError):
    """A movement would leave used + reserved above granted (a programming error:
    every caller checks the balance first, under the account's lock)."""


class ReservationNotFound(LookupError):
    """A turn is being closed that was never reserved (a programming error)."""


def locked_account(organization_id: int, month: str, *, now: datetime, actor_id: int | None) -> CreditAccount:
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
            record(
                account,
                kind=Kind.OPEN,
                now=now,
                granted_delta=micros_from_credits(allowance),
                actor_id=actor_id,
                reason=f"monthly allowance of {allowance} credits",
            )
    except IntegrityError:
        pass


def locked_account_of_turn(turn_id: UUID) -> CreditAccount:
    """The account holding the turn's reservation, locked (needs a transaction)."""
    account = (
        CreditAccount.objects.select_for_update(of=("self",))
        .filter(entries__turn_id=turn_id, entries__kind=Kind.RESERVE)
        .first()
    )
    if account is None:
        raise ReservationNotFound(f"turn {turn_id} has no reservation")
    return account


class Holds(NamedTuple):
    """What a turn's ledger rows say of it."""

    held: int  # micros it holds: its start reservation plus every hold taken before a call
    closed: bool
    person_id: int | None  # who started it: the actor of its start reservation
    model: str  # its model option and door, as its start reservation was told them
    door: str


def holds_of(turn_id: UUID) -> Holds:
    """The turn's holds, whether it is closed, who started it, its model and door, in one query."""
    entries = LedgerEntry.objects.filter(turn_id=turn_id, kind__in=LedgerEntry.TURN_KINDS).values_list(
        "kind", "reserved_delta", "actor_id", "model", "door"
    )
    held, closed, person, model, door = 0, False, None, "", ""
    for kind, delta, actor, its_model, its_door in entries:
        if kind in LedgerEntry.CLOSING_KINDS:
            closed = True
        else:
            held += delta
        if kind == Kind.RESERVE:
            person, model, door = actor, its_model, its_door
    return Holds(held, closed, person, model, door)


def reserve_entry(turn_id: UUID) -> LedgerEntry | None:
    return LedgerEntry.objects.select_related("account").filter(turn_id=turn_id, kind=Kind.RESERVE).first()


def record(
    account: CreditAccount,
    *,
    kind: str,
    now: datetime,
    turn_id: UUID | None = None,
    person_id: int | None = None,
    granted_delta: int = 0,
    used_delta: int = 0,
    reserved_delta: int = 0,
    actor_id: int | None = None,
    job: str = "",
    reason: str = "",
    model: str = "",
    door: str = "",
) -> LedgerEntry:
    """Apply deltas to a locked account and write the ledger row that explains them.

    The one place totals change, so the invariant used + reserved <= granted
    is checked here, before anything is written. A turn's row (`turn_id`) also
    moves the month totals of `person_id`, the person who started the turn
    (None: erased): one statement more; a close that charges (settle, stuck)
    adds the turn to its day's totals of its `model` and `door`: one more.
    """
    if account.used_micros + used_delta + account.reserved_micros + reserved_delta > (
        account.granted_micros + granted_delta
    ):
        raise Overdraft(f"a {kind} movement would overdraw account {account.pk}")
    used_before = account.used_micros
    account.granted_micros += granted_delta
    account.used_micros += used_delta
    account.reserved_micros += reserved_delta
    account.updated_at = now
    account.save(update_fields=["granted_micros", "used_micros", "reserved_micros", "updated_at"])
    alerts.after_movement(account, used_before)
    if turn_id is not None:
        _add_usage(account.pk, person_id, turns=int(kind == Kind.RESERVE), used=used_delta, reserved=reserved_delta)
        if kind in days.CHARGING_KINDS:
            days.add_close(account, now=now, model=model, door=door, used=used_delta)
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
        model=model,
        door=door,
        created_at=now,
    )


_USAGE = MemberMonthUsage._meta.db_table
# INSERT … ON CONFLICT DO UPDATE (PostgreSQL, SQLite ≥ 3.24): one statement
# whether or not the person's row of the month exists yet. Django's
# bulk_create(update_conflicts=True) can only overwrite with the new values,
# not add to the old ones.
_UPSERT = (
    f"INSERT INTO {_USAGE} AS u (account_id, user_id, turns, used_micros, reserved_micros)"  # noqa: S608
    " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (account_id, user_id) DO UPDATE SET"
    " turns = u.turns + excluded.turns, used_micros = u.used_micros + excluded.used_micros,"
    " reserved_micros = u.reserved_micros + excluded.reserved_micros"
)


def _add_usage(account_id: int, person_id: int | None, *, turns: int, used: int, reserved: int) -> None:
    """Add to the person's month totals, under the account's lock (so never two
    writers of one row at once). An erased person's turns (`person_id` None)
    go to one of the account's rows of no one: the sums are what is read."""
    if person_id is not None:
        with connection.cursor() as cursor:
            cursor.execute(_UPSERT, [account_id, person_id, turns, used, reserved])
        return
    nobody = MemberMonthUsage.objects.filter(account_id=account_id, user__isnull=True)
    moved = MemberMonthUsage.objects.filter(pk=Subquery(nobody.order_by("pk").values("pk")[:1])).update(
        turns=F("turns") + turns, used_micros=F("used_micros") + used, reserved_micros=F("reserved_micros") + reserved
    )
    if not moved:
        MemberMonthUsage.objects.create(account_id=account_id, turns=turns, used_micros=used,
                                        reserved_micros=reserved)


def usage_rebuild(account_id: int) -> None:
    """The people's month totals of one account, replaced by the sums of its
    ledger's turn rows, under the account's lock (what `credits_audit
    --rebuild-totals` runs for an account whose totals drifted: e.g. a turn
    settled by a worker of the release before the totals, while they were
    being filled)."""
    with transaction.atomic():
        CreditAccount.objects.select_for_update().filter(pk=account_id).first()
        person = LedgerEntry.objects.filter(turn_id=OuterRef("turn_id"), kind=Kind.RESERVE).values("actor_id")[:1]
        sums = (
            LedgerEntry.objects.filter(account_id=account_id, turn_id__isnull=False)
            .annotate(person=Subquery(person)).values("person")
            .annotate(turns=Count("turn_id", distinct=True), used=Sum("used_delta"), reserved=Sum("reserved_delta"))
            .order_by()
        )
        MemberMonthUsage.objects.filter(account_id=account_id).delete()
        MemberMonthUsage.objects.bulk_create(
            MemberMonthUsage(account_id=account_id, user_id=row["person"], turns=row["turns"],
                             used_micros=row["used"], reserved_micros=row["reserved"])
            for row in sums
        )

"""The ledger's one write, and the order in which movements take their rows.

A movement writes, in one transaction: the person's month totals
(MemberMonthUsage, for a turn's row), one ledger row, the day's totals
(DayUsage, for a close that charges), and LAST the account, with one
conditional UPDATE whose WHERE is the invariant used + reserved <= granted
(no row updated: the movement is refused and its transaction must roll back).
So the organization's account row, which every turn of the organization
writes, is locked only from that UPDATE to the commit: a turn start issues it
as its transaction's last statement (assistant/chat.py), and one
organization's submissions no longer queue behind each other's whole
transaction (issue 36.3). Reading the account needs no lock: the UPDATE
re-checks the balance on the row's latest version.

Lock order (PostgreSQL; every writer takes rows in this order, so no two
writers can wait on each other in a cycle):

1. the turn's start reservation row (LedgerEntry kind=reserve, `lock_turn`):
   a turn's closers and holds (the worker, the stuck-turn sweeper, a
   redelivered task) are serialized per turn;
2. the person's month totals row: one person's starts and holds are
   serialized there, so the cap check reads what the upsert returned;
3. the day's totals row (a charging close);
4. the account row, by the movement's last statement.

The foreign keys' checks of the inserted rows take FOR KEY SHARE on the
account, which the account's UPDATE (FOR NO KEY UPDATE) does not wait for.
The rebuilds (`usage_rebuild`, `days_rebuild`) lock their totals rows, then
the account FOR UPDATE, in the same order. On SQLite every transaction
opens with BEGIN IMMEDIATE (config/settings.py): writers are serialized at
BEGIN, and none of this can race.

The services that decide what to write (reserve, settle, grant…) are in
credits/services.py.
"""

from collections.abc import Callable
from datetime import datetime
from typing import NamedTuple
from uuid import UUID

from django.db import IntegrityError, connection, transaction
from django.db.models import Count, F, OuterRef, Subquery, Sum

from assistant_engine.foundation.prepared import PreparedValues
from assistant_engine.organizations.models import Organization
from credits import alerts, days
from credits.models import CreditAccount, LedgerEntry, MemberMonthUsage
from credits.money import micros_from_credits

Kind = LedgerEntry.Kind


class Overdraft(RuntimeError):
    """A movement would leave used + reserved above granted (the account's
    UPDATE found no room): what it wrote before must roll back with its
    transaction. The reservations and holds turn it into CreditsExhausted."""


class ReservationNotFound(LookupError):
    """A turn is being closed that was never reserved (a programming error)."""


def account_of_month(organization_id: int, month: str, *, now: datetime, actor_id: int | None) -> int:
    """The id of the month's account, opened first if needed. No lock: the
    movement's UPDATE of the account, its last statement, is what checks the balance."""
    found = _account_of_month(organization_id, month)
    if not found:
        _open_account(organization_id, month, now=now, actor_id=actor_id)
        found = _account_of_month(organization_id, month)
    return found[0][0]


# Every reservation and close runs these: compiled once (assistant_engine.foundation.prepared).
_account_of_month = PreparedValues(
    CreditAccount,
    # Unique (organization, month): at most one row, so no order (the model's orders by the organization's name).
    lambda organization_id, month: CreditAccount.objects.filter(organization_id=organization_id, month=month)
    .order_by().values_list("pk")[:1],
    CreditAccount._meta.get_field("organization"), CreditAccount._meta.get_field("month"),
)
_reserve_row_locked = PreparedValues(
    LedgerEntry,
    # One start reservation per turn (ledger_one_reserve_per_turn): no order needed.
    lambda turn_id: LedgerEntry.objects.select_for_update(of=("self",)).filter(turn_id=turn_id, kind=Kind.RESERVE)
    .order_by().values_list("account_id", "account__month", "account__organization_id")[:1],
    LedgerEntry._meta.get_field("turn_id"), for_update=True,
)
_turn_entries = PreparedValues(
    LedgerEntry,
    lambda turn_id: LedgerEntry.objects.filter(turn_id=turn_id, kind__in=LedgerEntry.TURN_KINDS).values_list(
        "kind", "reserved_delta", "actor_id", "model", "door"),
    LedgerEntry._meta.get_field("turn_id"),
)


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
                account.pk,
                kind=Kind.OPEN,
                now=now,
                granted_delta=micros_from_credits(allowance),
                actor_id=actor_id,
                reason=f"monthly allowance of {allowance} credits",
            )
    except IntegrityError:
        pass


class TurnAccount(NamedTuple):
    account_id: int
    month: str
    organization_id: int


def lock_turn(turn_id: UUID) -> TurnAccount:
    """Lock the turn's start reservation row (first in the lock order: the
    turn's closers and holds one after another) and say its account (needs a transaction).

    Read the turn's holds in a statement after this one: in READ COMMITTED, a
    close committed while this one waited is visible only to a later statement.
    """
    found = _reserve_row_locked(turn_id)
    if not found:
        raise ReservationNotFound(f"turn {turn_id} has no reservation")
    return TurnAccount(*found[0])


class Holds(NamedTuple):
    """What a turn's ledger rows say of it."""

    held: int  # micros it holds: its start reservation plus every hold taken before a call
    closed: bool
    person_id: int | None  # who started it: the actor of its start reservation
    model: str  # its model option and door, as its start reservation was told them
    door: str


def holds_of(turn_id: UUID) -> Holds:
    """The turn's holds, whether it is closed, who started it, its model and door, in one query."""
    held, closed, person, model, door = 0, False, None, "", ""
    for kind, delta, actor, its_model, its_door in _turn_entries(turn_id):
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
    account_id: int,
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
    month: str = "",
    spent_check: Callable[[int], None] | None = None,
    needs_room: bool = False,
) -> LedgerEntry:
    """Write a movement in the lock order (see above), the account's totals last.

    A turn's row (`turn_id`) also moves the month totals of `person_id`, the
    person who started the turn (None: erased), and `spent_check` (a cap
    check) is called with what the person then has used and holds, before
    anything else is written; a close that charges (settle, stuck) adds the
    turn to its day's totals of its `model` and `door` (`month`: the
    account's). `needs_room`: refused also when the account has nothing
    left, whatever the amount. Raises Overdraft when the account can't take
    it: the caller's transaction must roll back what was written before.
    """
    if turn_id is not None:
        spent = _add_usage(account_id, person_id, turns=int(kind == Kind.RESERVE), used=used_delta,
                           reserved=reserved_delta)
        if spent_check is not None:
            spent_check(spent)
    entry = LedgerEntry.objects.create(
        account_id=account_id, kind=kind, turn_id=turn_id, granted_delta=granted_delta, used_delta=used_delta,
        reserved_delta=reserved_delta, actor_id=actor_id, job=job, reason=reason, model=model, door=door,
        created_at=now,
    )
    if turn_id is not None and kind in days.CHARGING_KINDS:
        days.add_close(account_id, month, now=now, model=model, door=door, used=used_delta)
    _move_account(account_id, kind, now=now, granted=granted_delta, used=used_delta, reserved=reserved_delta,
                  needs_room=needs_room)
    return entry


_ACCOUNTS = CreditAccount._meta.db_table
# The invariant in the WHERE, on the row's latest version: PostgreSQL
# re-checks it after waiting for a concurrent writer of the row.
_MOVE = (
    f"UPDATE {_ACCOUNTS} SET granted_micros = granted_micros + %s, used_micros = used_micros + %s,"  # noqa: S608
    " reserved_micros = reserved_micros + %s, updated_at = %s"
    " WHERE id = %s AND used_micros + %s + reserved_micros + %s <= granted_micros + %s"
)
_WITH_ROOM = " AND granted_micros - used_micros - reserved_micros > 0"
_RETURNING = " RETURNING granted_micros, used_micros"


def _move_account(account_id: int, kind: str, *, now: datetime, granted: int, used: int, reserved: int,
                  needs_room: bool) -> None:
    """The account's one statement; tells the alerts what a charge crossed."""
    sql = _MOVE + (_WITH_ROOM if needs_room else "") + _RETURNING
    with connection.cursor() as cursor:
        cursor.execute(sql, [granted, used, reserved, now, account_id, used, reserved, granted])
        moved = cursor.fetchone()
    if moved is None:
        raise Overdraft(f"a {kind} movement would overdraw account {account_id}")
    granted_after, used_after = moved
    alerts.after_movement(account_id, used_after - used, used_after, granted_after)


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
    " RETURNING used_micros + reserved_micros"
)


def _add_usage(account_id: int, person_id: int | None, *, turns: int, used: int, reserved: int) -> int:
    """Add to the person's month totals and return what they then have used
    and hold. The upsert locks the person's row until the transaction ends: one
    person's concurrent starts and holds read their spending one after the
    other. An erased person's turns (`person_id` None) go to one of the
    account's rows of no one (the sums are what is read; no cap: 0 returned)."""
    if person_id is not None:
        with connection.cursor() as cursor:
            cursor.execute(_UPSERT, [account_id, person_id, turns, used, reserved])
            return cursor.fetchone()[0]
    nobody = MemberMonthUsage.objects.filter(account_id=account_id, user__isnull=True)
    moved = MemberMonthUsage.objects.filter(pk=Subquery(nobody.order_by("pk").values("pk")[:1])).update(
        turns=F("turns") + turns, used_micros=F("used_micros") + used, reserved_micros=F("reserved_micros") + reserved
    )
    if not moved:
        MemberMonthUsage.objects.create(account_id=account_id, turns=turns, used_micros=used,
                                        reserved_micros=reserved)
    return 0


def usage_rebuild(account_id: int) -> None:
    """The people's month totals of one account, replaced by the sums of its
    ledger's turn rows, under the account's lock, its rows locked first (the
    lock order) (what `credits_audit
    --rebuild-totals` runs for an account whose totals drifted: e.g. a turn
    settled by a worker of the release before the totals, while they were
    being filled)."""
    with transaction.atomic():
        list(MemberMonthUsage.objects.select_for_update().filter(account_id=account_id).values_list("pk"))
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

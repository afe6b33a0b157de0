"""The accounts' day totals (DayUsage): what each day's closed turns used, per
model option and door, kept by the ledger's one write (credits/ledger.py
`record`) and rebuilt from the ledger by `credits_days_rebuild`.

The day is the close's (UTC), clamped into the account's month: a turn
reserved on the 31st and settled after midnight is charged to the month that
holds its reservation, so it counts on that month's last day, and the sums of
an account's days stay its used total.
"""

from datetime import UTC, date, datetime, timedelta

from django.db import connection, transaction
from django.db.models import Count, Sum
from django.db.models.functions import TruncDate

from credits.forecast import month_bounds
from credits.models import CreditAccount, DayUsage, LedgerEntry

Kind = LedgerEntry.Kind
# The closes that charge: a release (no model call) moves nothing used.
CHARGING_KINDS = (Kind.SETTLE, Kind.STUCK)

_DAYS = DayUsage._meta.db_table
# INSERT … ON CONFLICT DO UPDATE (PostgreSQL, SQLite ≥ 3.24), as the people's
# month totals (credits/ledger.py): one statement whether or not the day's row
# exists yet, adding to it (bulk_create(update_conflicts=True) can only overwrite).
_UPSERT = (
    f"INSERT INTO {_DAYS} AS d (account_id, day, model, door, turns, used_micros)"  # noqa: S608
    " VALUES (%s, %s, %s, %s, 1, %s) ON CONFLICT (account_id, day, model, door) DO UPDATE SET"
    " turns = d.turns + excluded.turns, used_micros = d.used_micros + excluded.used_micros"
)


def day_in_month(moment: datetime, month: str) -> date:
    """The UTC day of `moment`, within `month` (its first or last day when outside)."""
    return clamped(moment.astimezone(UTC).date(), month)


def clamped(day: date, month: str) -> date:
    """`day`, or the first or last day of `month` when it falls outside it."""
    start, after = month_bounds(month)
    return min(max(day, start.date()), (after - timedelta(days=1)).date())


def add_close(account_id: int, month: str, *, now: datetime, model: str, door: str, used: int) -> None:
    """One closed turn on its day's row (the ledger's write). The upsert locks
    the row until the transaction ends, before the account (the ledger's lock
    order), so two closes of one account never write it at once; the ON
    CONFLICT makes two first closes of a day one row all the same."""
    day = connection.ops.adapt_datefield_value(day_in_month(now, month))
    with connection.cursor() as cursor:
        cursor.execute(_UPSERT, [account_id, day, model, door, used])


def days_rebuild(account_id: int) -> int:
    """The account's day totals, replaced by the sums of its ledger's charging
    closes, under the account's lock, its day rows locked first (the
    ledger's lock order); returns the rows written. The backfill
    of accounts older than the day totals (their turns' model and door were
    not recorded: "")."""
    with transaction.atomic():
        list(DayUsage.objects.select_for_update().filter(account_id=account_id).values_list("pk"))
        account = CreditAccount.objects.select_for_update().get(pk=account_id)
        sums = (
            LedgerEntry.objects.filter(account_id=account_id, kind__in=CHARGING_KINDS)
            .annotate(on=TruncDate("created_at", tzinfo=UTC)).values("on", "model", "door")
            .annotate(turns=Count("id"), used=Sum("used_delta")).order_by()
        )
        days: dict[tuple, list[int]] = {}
        for row in sums:
            totals = days.setdefault((clamped(row["on"], account.month), row["model"], row["door"]), [0, 0])
            totals[0] += row["turns"]
            totals[1] += row["used"]
        DayUsage.objects.filter(account_id=account_id).delete()
        DayUsage.objects.bulk_create(
            DayUsage(account_id=account_id, day=day, model=model, door=door, turns=turns, used_micros=used)
            for (day, model, door), (turns, used) in days.items()
        )
    return len(days)

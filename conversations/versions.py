"""Which version of a conversation is newer: last write wins by `updatedAt`.

A client's `updatedAt` is taken as it comes, also ahead of the server's clock
(a client with a fast clock must still sync). So a write of the server's own
(a turn's message, its end, a rename) can't simply date itself `now`: behind a
stored version dated ahead, it would be older than it, and the client's next
upload of its copy without that write would win over it. It dates itself just
after the stored version instead. `version_after` says it; `version_after_sql`
says the same in one UPDATE, for a write that doesn't read the row first.
"""

from datetime import UTC, datetime, timedelta

from django.db.models import Case, DateTimeField, F, Value, When

# A millisecond: a client that compares epoch milliseconds sees the step too.
VERSION_STEP = timedelta(milliseconds=1)


def version_after(stored: datetime | None, now: datetime) -> datetime:
    """`now`, or just after `stored` when that is not before `now`. At the end
    of datetime's range (a client's 9999-12-31T23:59:59.999Z) it stays there."""
    if stored is None or stored < now:
        return now
    try:
        return stored + VERSION_STEP
    except OverflowError:
        return stored


LAST = datetime.max.replace(tzinfo=UTC)


def version_after_sql(now: datetime, field: str = "updated_at") -> Case:
    """version_after(<the row's field>, now), computed by the database."""
    return Case(
        When(**{f"{field}__lt": now}, then=Value(now)),
        When(**{f"{field}__gt": LAST - VERSION_STEP}, then=F(field)),
        default=F(field) + VERSION_STEP,
        output_field=DateTimeField(),
    )

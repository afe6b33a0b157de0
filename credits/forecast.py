"""When the month's credits run out at the month's pace (issue 35.2).

The pace is what was spent (used and held) since the month began (UTC), per
second; the day is when the rest is spent at that pace. No day when nothing was
spent yet, or when the pace lasts past the month's end (the credits last the
month); today when nothing is left. Pure: the callers read the totals they
already show (the account's month, the person's month row), no query here.
"""

from datetime import UTC, date, datetime


def month_bounds(month: str) -> tuple[datetime, datetime]:
    """The first instant of `month` ("YYYY-MM", UTC) and of the month after."""
    year, number = (int(part) for part in month.split("-"))
    start = datetime(year, number, 1, tzinfo=UTC)
    after = datetime(year + number // 12, number % 12 + 1, 1, tzinfo=UTC)
    return start, after


def run_out_day(*, spent_micros: int, limit_micros: int, month: str, now: datetime) -> date | None:
    """The day (UTC) `limit_micros` is reached at the pace of `spent_micros`
    since the month began, or None when it is not reached this month."""
    start, after = month_bounds(month)
    if spent_micros >= limit_micros:
        return now.astimezone(UTC).date()
    elapsed = (now - start).total_seconds()
    if spent_micros <= 0 or elapsed <= 0:
        return None
    seconds_left = (limit_micros - spent_micros) * elapsed / spent_micros
    remaining_in_month = (after - now).total_seconds()
    if seconds_left >= remaining_in_month:
        return None
    return datetime.fromtimestamp(now.timestamp() + seconds_left, tz=UTC).date()

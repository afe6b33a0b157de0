"""Which version of a conversation is newer: last write wins by `updatedAt`.

A client's `updatedAt` is taken as it comes, also ahead of the server's clock
(a client with a fast clock must still sync). So a write of the server's own
(a turn's message, its end, a rename) can't simply date itself `now`: behind a
stored version dated ahead, it would be older than it, and the client's next
upload of its copy without that write would win over it. It dates itself just
after the stored version instead.
"""

from datetime import datetime, timedelta

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

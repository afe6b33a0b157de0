"""Work for the periodic jobs of `make bench-scale` (issue 36.5): before each
sample (not timed), WORK rows of the other tenants become what the job looks
for — conversations idle past the purge, cards past their expiry or without
their outcome, turns stuck or never taken (their credits still held), tokens
expired, stalled erasures, old staff accesses and Telegram updates — the
same number at both sizes, so the job's cost is compared for the same work.
"""

from django.conf import settings
from django.db import connection, transaction

WORK = 20

# The other tenants' rows (never the probes', whose paths are measured as they are).
OTHERS = "JOIN assistant_organizations_organization g ON g.id = {alias}.organization_id AND g.slug LIKE 'other-%%'"

IDLE = f"""UPDATE conversations_thread SET last_activity_at = now() - %(idle_days)s * interval '1 day'
    WHERE id IN (SELECT t.id FROM conversations_thread t {OTHERS.format(alias="t")}
                 WHERE t.status = 'idle' AND t.last_activity_at > now() - interval '60 days' LIMIT %(k)s)"""
EXPIRED_CARDS = f"""UPDATE assistant_actioncard SET expires_at = now() - interval '1 hour'
    WHERE id IN (SELECT c.id FROM assistant_actioncard c {OTHERS.format(alias="c")}
                 WHERE c.status = 'pending' AND c.expires_at > now() LIMIT %(k)s)"""
INTERRUPTED_CARDS = f"""UPDATE assistant_actioncard SET result = NULL, decided_at = now() - interval '1 day'
    WHERE id IN (SELECT c.id FROM assistant_actioncard c {OTHERS.format(alias="c")}
                 WHERE c.status = 'confirmed' AND c.result IS NOT NULL LIMIT %(k)s)"""
EXPIRED_TOKENS = f"""UPDATE assistant_organizations_apitoken SET expiry = now() - interval '1 day'
    WHERE digest IN (SELECT a.digest FROM assistant_organizations_apitoken a {OTHERS.format(alias="a")}
                     WHERE a.expiry > now() LIMIT %(k)s)"""
OLD_ACCESSES = """INSERT INTO assistant_organizations_staffaccess (at, staff_username, kind, object_id, path)
    SELECT now() - %(retention_days)s * interval '1 day', 'root', 'thread', '', '/admin/'
    FROM generate_series(1, %(k)s)"""
OLD_UPDATES = """INSERT INTO telegram_surface_receivedupdate (update_id, received_at, handled_at)
    SELECT 1000000 * %(round)s + n, now() - interval '3 days', now() - interval '3 days'
    FROM generate_series(1, %(k)s) n"""
# The job leaves them as it found them (enqueued again, no worker here): done before the next sample.
ERASURES_DONE = "UPDATE assistant_erasure SET status = 'done' WHERE status = 'running'"
STALLED_ERASURES = [
    ERASURES_DONE,
    """INSERT INTO assistant_erasure (id, subject_id, status, batches, counts, blocked_by, created_at, updated_at)
       SELECT gen_random_uuid(), 1000000000 + 1000 * %(round)s + n, 'running', 1, '{}', '',
              now() - interval '1 hour', now() - interval '1 hour'
       FROM generate_series(1, %(k)s) n""",
]
# Finished turns of the others become ones still holding their credits: the
# closing entry goes, the hold is back on the account and the person's month.
_PICKED_TURNS = f"""CREATE TEMP TABLE picked ON COMMIT DROP AS
    SELECT r.id, r.thread_id, e.account_id, r.user_id FROM assistant_turn r {OTHERS.format(alias="r")}
    JOIN credits_ledgerentry e ON e.turn_id = r.id AND e.kind = 'settle'
    WHERE r.status = 'done' LIMIT %(k)s"""
_HELD_AGAIN = [
    "DELETE FROM credits_ledgerentry WHERE kind = 'settle' AND turn_id IN (SELECT id FROM picked)",
    # (The seed's accounts hold none of their ledger's use, so only the hold goes back on them.)
    """UPDATE credits_creditaccount a SET reserved_micros = a.reserved_micros + 30000 * p.n
       FROM (SELECT account_id, count(*) n FROM picked GROUP BY 1) p WHERE a.id = p.account_id""",
    """UPDATE credits_membermonthusage u SET reserved_micros = u.reserved_micros + 30000 * p.n, used_micros =
       u.used_micros - 100 * p.n FROM (SELECT account_id, user_id, count(*) n FROM picked GROUP BY 1, 2) p
       WHERE u.account_id = p.account_id AND u.user_id = p.user_id""",
    "UPDATE conversations_thread SET status = 'responding' WHERE id IN (SELECT thread_id FROM picked)",
]
STUCK_TURNS = [_PICKED_TURNS, *_HELD_AGAIN, """UPDATE assistant_turn SET status = 'running', finished_at = NULL,
    started_at = now() - interval '1 day' WHERE id IN (SELECT id FROM picked)"""]
QUEUED_TURNS = [_PICKED_TURNS, *_HELD_AGAIN, """UPDATE assistant_turn SET status = 'queued', finished_at = NULL,
    started_at = NULL, created_at = now() - interval '1 hour', requeued_at = now() - interval '1 hour',
    enqueue_attempts = 2 WHERE id IN (SELECT id FROM picked)"""]


def work(*statements: str):
    """A path's setup: run these statements (with WORK and the round) in one transaction."""
    def setup(_context, round_number):
        params = {"k": WORK, "round": round_number + 1, "idle_days": settings.ASSISTANT_IDLE_PURGE_DAYS + 10,
                  "retention_days": settings.STAFF_ACCESS_RETENTION_DAYS + 10}
        with transaction.atomic(), connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement, params)

    return setup

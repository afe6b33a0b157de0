"""The deployment `make bench-scale` measures, written with set-based SQL
(INSERT … SELECT over generate_series), so a size of 200,000 messages takes
seconds, not the minutes of ORM saves.

A tenant shape: `orgs` organizations × `people` people × `threads`
conversations × `messages` messages each; per conversation a turn for every 4
messages (each with a reserve and a settle ledger row), a tool call on every
assistant message, one card (confirmed with its outcome; every tenth pending, not
yet expired); per person an unexpired API token and the month totals of
its turns; per account the day totals of its turns (by model and door).
Every message holds the common word `hello`; the rarer `budget` is
in one message of every seventh conversation. Timestamps fall in the last 30 days, so the periodic jobs find
nothing to do in the seed itself (what they cost is finding that out); bench/scale_work.py gives them their
work before each sample of the rows that measure a job with work.
"""

import json

from django.apps import apps
from django.db import connection
from django.db.models import NOT_PROVIDED

TENANT_SQL = [
    """INSERT INTO assistant_organizations_organization (name, slug, monthly_credits, created_at)
       SELECT %(p)s || ' ' || o, %(p)s || '-' || o, 1000000, now() - interval '60 days'
       FROM generate_series(1, %(orgs)s) o""",
    """INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email, is_staff, is_active,
                              date_joined)
       SELECT '!', false, %(p)s || '-' || o || '-' || u, '', '', '', false, true, now() - interval '60 days'
       FROM generate_series(1, %(orgs)s) o, generate_series(1, %(people)s) u ORDER BY o, u""",
    """INSERT INTO assistant_organizations_membership (role, created_at, user_id, organization_id)
       SELECT CASE WHEN u.username LIKE '%%-1' THEN 'admin' ELSE 'member' END, now(), u.id, g.id
       FROM auth_user u JOIN assistant_organizations_organization g
         ON g.slug = split_part(u.username, '-', 1) || '-' || split_part(u.username, '-', 2)
       WHERE g.slug LIKE %(p)s || '-%%'""",
    """INSERT INTO conversations_thread (id, title, created_at, updated_at, last_activity_at, status, organization_id,
                                         user_id, continuous, surface, client_json, external_id, next_seq,
                                         history_bytes)
       SELECT gen_random_uuid(), 'Conversation ' || t, x.at, x.at, x.at, 'idle', m.organization_id, m.user_id,
              false, '', '', '', %(messages)s, NULL
       FROM assistant_organizations_membership m
            JOIN assistant_organizations_organization g ON g.id = m.organization_id,
            generate_series(1, %(threads)s) t,
            -- m.id: one draw per row, not one per hour (a memoized lateral)
            LATERAL (SELECT now() - t * interval '1 hour' - random() * interval '50 minutes'
                            + m.id * interval '0') x(at)
       WHERE g.slug LIKE %(p)s || '-%%'""",
    """INSERT INTO conversations_message (id, client_id, seq, role, content, status, created_at, thread_id, notice,
                                          client_json, external_id)
       SELECT x.id, x.id, x.s, CASE WHEN x.s %% 2 = 0 THEN 'user' ELSE 'assistant' END,
              'hello w' || (x.s * 7919 + x.n) %% 5000 || ' w' || (x.s * 104729 + x.n) %% 3000 || ' and some more text'
              || CASE WHEN x.s = 3 AND x.n %% 7 = 0 THEN ' about the budget' ELSE '' END,
              'complete', x.created_at + x.s * interval '1 second', x.thread_id, '', '', ''
       FROM (SELECT gen_random_uuid() id, s, t.id thread_id, t.created_at,
                    row_number() OVER (PARTITION BY t.user_id ORDER BY t.created_at DESC) n
             FROM conversations_thread t JOIN assistant_organizations_organization g ON g.id = t.organization_id,
                  generate_series(0, %(messages)s - 1) s
             WHERE g.slug LIKE %(p)s || '-%%') x""",
    """INSERT INTO conversations_toolcall (id, message_id, position, tool_use_id, name, input, result, is_error,
                                           created_at, finished_at)
       SELECT gen_random_uuid(), m.id, 0, 'toolu_' || m.seq, 'search_notes', '{"query": "budget"}',
              '{"notes": []}', false, m.created_at, m.created_at
       FROM conversations_message m JOIN conversations_thread t ON t.id = m.thread_id
            JOIN assistant_organizations_organization g ON g.id = t.organization_id
       WHERE g.slug LIKE %(p)s || '-%%' AND m.seq %% 2 = 1""",
    """INSERT INTO credits_creditaccount (month, granted_micros, used_micros, reserved_micros, opened_at, updated_at,
                                          organization_id)
       SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM'), 100000000000, 0, 0, now(), now(), g.id
       FROM assistant_organizations_organization g WHERE g.slug LIKE %(p)s || '-%%'""",
    """INSERT INTO assistant_turn (id, thread_id, organization_id, user_id, model_option, status, failure_kind,
                                   steps, tool_calls, input_tokens, output_tokens, cache_write_tokens,
                                   cache_read_tokens, credit_month, reserved_micros, cost_micros, read_private,
                                   read_untrusted, enqueue_attempts, created_at, started_at, finished_at)
       SELECT gen_random_uuid(), t.id, t.organization_id, t.user_id, 'offline', 'done', '', 1, 0, 100, 20, 0, 0,
              to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM'), 0, 100, false, false, 1,
              now() - random() * interval '30 days', now(), now()
       FROM conversations_thread t JOIN assistant_organizations_organization g ON g.id = t.organization_id,
            generate_series(1, greatest(1, %(messages)s / 4)) k
       WHERE g.slug LIKE %(p)s || '-%%'""",
    """INSERT INTO credits_ledgerentry (kind, turn_id, granted_delta, used_delta, reserved_delta, job, reason,
                                        created_at, account_id, actor_id)
       SELECT k.kind, r.id, 0, CASE WHEN k.kind = 'settle' THEN 100 ELSE 0 END,
              CASE WHEN k.kind = 'settle' THEN -30000 ELSE 30000 END, '', '', r.created_at, a.id,
              CASE WHEN k.kind = 'reserve' THEN r.user_id END
       FROM assistant_turn r JOIN assistant_organizations_organization g ON g.id = r.organization_id
            JOIN credits_creditaccount a ON a.organization_id = r.organization_id,
            (VALUES ('reserve'), ('settle')) k(kind)
       WHERE g.slug LIKE %(p)s || '-%%'""",
    # The people's month totals that ledger gives (what the ledger's write keeps).
    """INSERT INTO credits_membermonthusage (account_id, user_id, turns, used_micros, reserved_micros)
       SELECT a.id, r.user_id, count(*), 100 * count(*), 0
       FROM assistant_turn r JOIN assistant_organizations_organization g ON g.id = r.organization_id
            JOIN credits_creditaccount a ON a.organization_id = r.organization_id
       WHERE g.slug LIKE %(p)s || '-%%'
       GROUP BY a.id, r.user_id""",
    # The accounts' day totals that ledger gives (what the ledger's write keeps: credits/days.py), a door per turn.
    """INSERT INTO credits_dayusage (account_id, day, model, door, turns, used_micros)
       SELECT a.id, greatest((r.created_at AT TIME ZONE 'UTC')::date,
                             date_trunc('month', now() AT TIME ZONE 'UTC')::date),
              r.model_option,
              (ARRAY['browser', 'panel', 'api', 'ai', 'mcp', 'telegram'])[1 + abs(hashtext(r.id::text)) %% 6],
              count(*), 100 * count(*)
       FROM assistant_turn r JOIN assistant_organizations_organization g ON g.id = r.organization_id
            JOIN credits_creditaccount a ON a.organization_id = r.organization_id
       WHERE g.slug LIKE %(p)s || '-%%'
       GROUP BY 1, 2, 3, 4""",
    """INSERT INTO assistant_actioncard (id, organization_id, user_id, thread_id, tool_name, tool_input, description,
                                         snapshot_hash, trifecta_warning, status, created_at, expires_at, decided_at,
                                         result, error)
       SELECT gen_random_uuid(), t.organization_id, t.user_id, t.id, 'send_email', '{}', 'Send a mail', 'h', false,
              CASE WHEN n %% 10 = 0 THEN 'pending' ELSE 'confirmed' END, t.created_at,
              now() + interval '1 day', CASE WHEN n %% 10 = 0 THEN NULL ELSE t.created_at END,
              CASE WHEN n %% 10 = 0 THEN NULL ELSE '{"sent": true}'::jsonb END, ''
       FROM (SELECT t.*, row_number() OVER () n FROM conversations_thread t
             JOIN assistant_organizations_organization g ON g.id = t.organization_id
             WHERE g.slug LIKE %(p)s || '-%%') t""",
    """INSERT INTO assistant_organizations_apitoken (digest, token_key, created, expiry, user_id, public_id, name,
                                           organization_id, mcp_only)
       SELECT md5(random()::text) || md5(random()::text) || md5(random()::text) || md5(random()::text),
              substr(md5(random()::text), 1, 15), now(), now() + interval '30 days', m.user_id, gen_random_uuid(),
              'bench', m.organization_id, false
       FROM assistant_organizations_membership m JOIN assistant_organizations_organization g ON g.id = m.organization_id
       WHERE g.slug LIKE %(p)s || '-%%'""",
]


def adopt_model_defaults() -> None:
    """Give every NOT NULL column with a constant default in its model that
    default in the database too (this throwaway one only), so the INSERTs above
    need not name a column added since they were written: a new `mcp_only` or
    `after_reading` no longer breaks the bench (it did, twice)."""
    with connection.cursor() as cursor:
        for model in apps.get_models():
            for field in model._meta.concrete_fields:
                default = _constant_default(field)
                if default is not None:
                    cursor.execute(
                        f'ALTER TABLE "{model._meta.db_table}" ALTER COLUMN "{field.column}" SET DEFAULT %s',
                        [default],
                    )


def _constant_default(field):
    """The field's default as a database value, or None when it has none to adopt
    (nullable, no default, or one computed per row such as a uuid or now())."""
    if field.null or field.default is NOT_PROVIDED or field.primary_key:
        return None
    default = field.default() if field.default in (dict, list) else field.default
    if callable(default):
        return None
    if isinstance(default, (dict, list)):
        return json.dumps(default)
    return field.get_db_prep_value(default, connection)


def seed_tenants(prefix: str, *, orgs: int, people: int, threads: int, messages: int) -> None:
    params = {"p": prefix, "orgs": orgs, "people": people, "threads": threads, "messages": messages}
    with connection.cursor() as cursor:
        for statement in TENANT_SQL:
            cursor.execute(statement, params)


def counts() -> dict[str, int]:
    tables = {"organizations": "assistant_organizations_organization", "people": "auth_user",
              "messages": "conversations_message", "turns": "assistant_turn", "ledger": "credits_ledgerentry",
              "cards": "assistant_actioncard"}
    with connection.cursor() as cursor:
        result = {}
        for name, table in tables.items():
            cursor.execute(f"SELECT count(*) FROM {table}")  # noqa: S608 (names from the dict above)
            result[name] = cursor.fetchone()[0]
    return result

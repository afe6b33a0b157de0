"""The plans that keep the periodic jobs and the exports flat with the
deployment's size (issue 23, `make bench-scale`): each reads its own index,
never every tenant's rows. PostgreSQL only; the tables are tiny here, so
sequential scans are turned off to ask which index the planner *can* use."""

import uuid
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from assistant import exports
from assistant.cards import cards_mark_interrupted
from assistant.models import ActionCard
from assistant_engine.organizations.access_log import staff_accesses_purge
from assistant_engine.organizations.tokens import expired_tokens_purge
from assistant_engine.web.organization import organization_page
from credits.money import current_month
from credits.services import credits_reserve, credits_settle
from tests.conftest import make_person
from tests.conversations.factories import make_thread

pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db]


@pytest.fixture(autouse=True)
def _postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("plans are PostgreSQL's")


def explained(queryset, *, without: tuple[str, ...] = ()) -> str:
    """EXPLAIN of the queryset with sequential scans off and the indexes
    `without` dropped (in a transaction rolled back): on tables this small the
    planner may pick a wider index it would never pick at scale (CI once saw
    the date index filter one organization's turns)."""
    sql, params = queryset.query.sql_with_params()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        for index in without:
            cursor.execute(f"DROP INDEX {connection.ops.quote_name(index)}")
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        transaction.set_rollback(True)
        return plan


def plans_of(run) -> str:
    """EXPLAIN of every statement `run` sends (SELECT, UPDATE, DELETE), in a
    transaction rolled back."""
    with CaptureQueriesContext(connection) as captured:
        run()
    explained = []
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        for query in captured.captured_queries:
            if query["sql"].lstrip().upper().startswith(("SELECT", "UPDATE", "DELETE")):
                cursor.execute("EXPLAIN " + query["sql"])
                explained.append("\n".join(row[0] for row in cursor.fetchall()))
        transaction.set_rollback(True)
    assert explained, "the job sent no statement"
    return "\n\n".join(explained)


def test_the_interrupted_card_sweep_reads_its_partial_index(owner):
    thread = make_thread(owner)
    ActionCard.objects.create(organization=owner.organization, user=owner.user, thread=thread, tool_name="send_email",
                              description="d", snapshot_hash="h", status=ActionCard.Status.CONFIRMED,
                              expires_at=timezone.now(), decided_at=timezone.now() - timedelta(days=1),
                              result={"sent": True})
    plan = plans_of(cards_mark_interrupted)
    assert "card_confirmed_no_outcome" in plan, plan


def test_the_expired_token_purge_reads_the_expiry_index(owner):
    # Ordered by primary key, an empty table's plan walked the key filtering
    # each row's expiry (what CI caught once): the batch is ordered by expiry.
    plan = plans_of(expired_tokens_purge)
    assert "apitoken_expiry" in plan and "apitoken_pkey" not in plan, plan


def test_the_staff_access_purge_reads_the_date_index(owner):
    plan = plans_of(staff_accesses_purge)
    assert "staffaccess_at" in plan and "staffaccess_pkey" not in plan, plan


def test_the_turns_export_of_an_organization_reads_its_index(owner):
    # Without the date index and the plain organization index (its foreign
    # key's, which an empty table's plan picked on one CI run): the question is
    # whether the organization-and-date index serves this query.
    now = timezone.now()
    plan = explained(exports.turns_of_period(start=now - timedelta(days=7), end=now, organization=owner.organization),
                     without=("turn_created", index_on("assistant_turn", ["organization_id"])))
    assert "turn_org_created" in plan, plan


def index_on(table: str, columns: list[str]) -> str:
    """The name of the one plain index on exactly `columns` (Django names a foreign key's with a hash)."""
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    [name] = [name for name, info in constraints.items()
              if info["index"] and not info["unique"] and not info["primary_key"] and info["columns"] == columns]
    return name


def test_the_turns_export_of_everyone_reads_the_date_index(owner):
    now = timezone.now()
    plan = explained(exports.turns_of_period(start=now - timedelta(days=7), end=now))
    assert "turn_created" in plan, plan


@pytest.fixture
def a_month_of_turns(owner):
    for _ in range(3):
        turn_id = uuid.uuid4()
        credits_reserve(owner.member, turn_id=turn_id)
        credits_settle(turn_id=turn_id, cost_micros=200)


def test_the_usage_of_an_organizations_month_reads_the_peoples_totals_not_the_ledger(owner, a_month_of_turns):
    plan = plans_of(lambda: exports.usage_rows(owner.organization.pk, current_month(timezone.now())))
    # Through one of the totals' indexes (on tables this small the planner picks either), never the ledger.
    assert " on credits_membermonthusage" in plan and "credits_ledgerentry" not in plan, plan


def test_the_organization_page_reads_no_ledger(owner, a_month_of_turns):
    admin = make_person("ada", owner.organization, role="admin")
    plan = plans_of(lambda: organization_page(admin.member))
    # Through one of the totals' indexes (on tables this small the planner picks either), never the ledger.
    assert " on credits_membermonthusage" in plan and "credits_ledgerentry" not in plan, plan

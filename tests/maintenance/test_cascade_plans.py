"""The cascades of deleting conversations (issue 36.5): Django deletes a
thread's cards with `DELETE … WHERE thread_id IN (the threads)`. PostgreSQL
compares a long IN list by hashing it, so a whole-table scan costs it little
per row, while the index costs it per listed id: with a list of 100 threads
it read every card of a table of 8,000 (the erasure of a person with 100
conversations), with the index right there. Here the planner is asked as it
decides at scale: real row counts, ANALYZE run, sequential scans allowed.
PostgreSQL only."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from assistant import maintenance
from assistant.models import ActionCard
from assistant_engine.organizations.personal_data import erase_user
from conversations.models import Thread

pytestmark = [pytest.mark.postgres_only, pytest.mark.django_db]

OTHERS_CARDS = 8000
CARD_CASCADE = 'DELETE FROM "assistant_actioncard" WHERE "assistant_actioncard"."thread_id" IN'


@pytest.fixture(autouse=True)
def _postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("plans are PostgreSQL's")


def conversations_with_cards(person, count: int, *, idle_days: int = 0) -> list[Thread]:
    """`count` conversations of the person, each with one confirmed card."""
    at = timezone.now() - timedelta(days=idle_days)
    threads = Thread.objects.bulk_create(
        Thread(organization=person.organization, user=person.user, title=f"t{n}", created_at=at, updated_at=at,
               last_activity_at=at)
        for n in range(count)
    )
    ActionCard.objects.bulk_create(
        ActionCard(organization=person.organization, user=person.user, thread=thread, tool_name="send_email",
                   description="Send a mail", snapshot_hash="h", status=ActionCard.Status.CONFIRMED,
                   expires_at=at + timedelta(days=1), decided_at=at, result={"sent": True})
        for thread in threads
    )
    return threads


def analyzed() -> None:
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE assistant_actioncard")
        cursor.execute("ANALYZE conversations_thread")


def card_cascade_plans(run) -> list[str]:
    """EXPLAIN (as the planner decides, nothing turned off) of each cascade of
    `run` onto the cards by thread, in a transaction rolled back."""
    with CaptureQueriesContext(connection) as captured:
        run()
    cascades = [query["sql"] for query in captured.captured_queries if query["sql"].startswith(CARD_CASCADE)]
    assert cascades, "no cascade onto the cards was sent"
    plans = []
    with transaction.atomic(), connection.cursor() as cursor:
        for sql in cascades:
            cursor.execute("EXPLAIN " + sql)
            plans.append("\n".join(row[0] for row in cursor.fetchall()))
        transaction.set_rollback(True)
    return plans


def assert_by_the_thread_index(plans: list[str]) -> None:
    for plan in plans:
        # Either index led by thread_id: the foreign key's, or card_thread_events.
        assert "Seq Scan" not in plan and "Index Scan" in plan and "thread" in plan.split("Index Scan", 1)[1], plan


def test_erasing_a_person_with_many_conversations_deletes_their_cards_by_the_thread_index(owner, outsider):
    conversations_with_cards(owner, 100)
    conversations_with_cards(outsider, OTHERS_CARDS)
    analyzed()

    def erase():
        while not erase_user(owner.user, settings.ASSISTANT_ERASURE_BATCH_SIZE).done:
            pass

    plans = card_cascade_plans(erase)

    assert_by_the_thread_index(plans)
    assert ActionCard.objects.count() == OTHERS_CARDS  # the outsider's, every one


def test_the_idle_purge_deletes_the_cards_of_its_batch_by_the_thread_index(owner, outsider):
    conversations_with_cards(owner, settings.ASSISTANT_PURGE_BATCH_SIZE,
                             idle_days=settings.ASSISTANT_IDLE_PURGE_DAYS + 1)
    conversations_with_cards(outsider, OTHERS_CARDS)
    analyzed()

    plans = card_cascade_plans(maintenance.purge_idle_threads)

    assert_by_the_thread_index(plans)
    assert ActionCard.objects.filter(user=owner.user).count() == 0
    assert ActionCard.objects.count() == OTHERS_CARDS

"""Conversations deleted a few per statement (conversations.deletion): every
one goes with what cascades from it, the counts summed over the statements."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from conversations.deletion import THREADS_PER_STATEMENT, threads_delete
from conversations.models import Message, Thread, ToolCall
from tests.conversations.factories import make_thread

CHUNKS = 3
COUNT = CHUNKS * THREADS_PER_STATEMENT - 2  # the last statement takes fewer


def test_the_threads_go_with_their_messages_and_calls_counted_over_every_statement(owner, colleague):
    doomed = [make_thread(owner, messages=2, calls=1).id for _ in range(COUNT)]
    kept = make_thread(colleague, messages=2, calls=1)

    with CaptureQueriesContext(connection) as captured:
        total, per_model = threads_delete(doomed)

    deleted = {label: count for label, count in per_model.items() if count}
    assert deleted == {"conversations.Thread": COUNT, "conversations.Message": 2 * COUNT,
                       "conversations.ToolCall": 2 * COUNT}
    assert total == 5 * COUNT
    assert list(Thread.objects.values_list("id", flat=True)) == [kept.id]
    assert Message.objects.count() == 2 and ToolCall.objects.count() == 2
    thread_deletes = [q for q in captured.captured_queries if q["sql"].startswith('DELETE FROM "conversations_thread"')]
    assert len(thread_deletes) == CHUNKS


def test_no_threads_sends_nothing(db):
    with CaptureQueriesContext(connection) as captured:
        assert threads_delete([]) == (0, {})
    assert captured.captured_queries == []

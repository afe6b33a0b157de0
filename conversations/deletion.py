"""Deleting conversations in statements the indexes serve (issue 36.5).

Django deletes a thread's dependents (cards, messages, summaries; turns set
null) with one `… WHERE thread_id IN (the threads)` each. PostgreSQL (14 and
later) compares a long IN list by hashing it once, so it costs a whole-table
scan at little per row but the index at a descent per listed id: for a list
of N threads it reads every row of a table of up to some 150 × N rows (all
8,000 cards for the 100 conversations of one person), the thread's index
unused. Ten threads per statement keep each list short: the index serves
once a table holds more than some 1,500 rows, and below that a scan reads
no more than that, whatever the deployment's size.
"""

from collections import Counter
from collections.abc import Sequence
from uuid import UUID

from conversations.models import Thread

# Threads per DELETE statement (and so per cascade's IN list).
THREADS_PER_STATEMENT = 10


def threads_delete(thread_ids: Sequence[UUID]) -> tuple[int, dict[str, int]]:
    """Delete these threads with everything that cascades from them, a few
    per statement. Returns what QuerySet.delete() returns, summed: the rows
    deleted and their count per model label. The caller holds the transaction."""
    total, per_model = 0, Counter()
    for start in range(0, len(thread_ids), THREADS_PER_STATEMENT):
        deleted, counts = Thread.objects.filter(pk__in=thread_ids[start:start + THREADS_PER_STATEMENT]).delete()
        total += deleted
        per_model.update(counts)
    return total, dict(per_model)

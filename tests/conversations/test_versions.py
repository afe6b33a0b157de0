"""Issue 34.11: a server write dates itself after the stored version, even one dated ahead of its clock."""

from datetime import UTC, datetime, timedelta

import pytest

from conversations.models import Thread
from conversations.versions import VERSION_STEP, version_after, version_after_sql
from tests.conversations.factories import make_thread

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def test_now_when_the_stored_version_is_older_or_absent():
    assert version_after(None, NOW) == NOW
    assert version_after(NOW - timedelta(microseconds=1), NOW) == NOW


def test_just_after_a_stored_version_not_before_now():
    assert version_after(NOW, NOW) == NOW + VERSION_STEP
    ahead = NOW + timedelta(days=3)
    assert version_after(ahead, NOW) == ahead + VERSION_STEP
    assert VERSION_STEP == timedelta(milliseconds=1)  # visible to a client comparing epoch milliseconds


def test_the_end_of_the_range_stays_there():
    assert version_after(datetime.max.replace(tzinfo=UTC), NOW) == datetime.max.replace(tzinfo=UTC)


@pytest.mark.django_db
@pytest.mark.parametrize("stored", [NOW - timedelta(days=1), NOW, NOW + timedelta(days=3),
                                    datetime.max.replace(tzinfo=UTC) - timedelta(microseconds=500),
                                    datetime.max.replace(tzinfo=UTC)])
def test_the_database_computes_the_same_version(owner, stored):
    thread = make_thread(owner)
    Thread.objects.filter(id=thread.id).update(updated_at=stored)
    Thread.objects.filter(id=thread.id).update(updated_at=version_after_sql(NOW))
    thread.refresh_from_db()
    assert thread.updated_at == version_after(stored, NOW)

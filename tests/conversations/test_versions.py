"""Issue 34.11: a server write dates itself after the stored version, even one dated ahead of its clock."""

from datetime import UTC, datetime, timedelta

from conversations.versions import VERSION_STEP, version_after

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

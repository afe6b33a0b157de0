"""A prepared UPDATE runs the ORM's own SQL with each call's values: the rows
it writes and the ones it leaves are those `queryset.update()` would."""

from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from assistant_engine.foundation.prepared import CannotPrepare, PreparedUpdate, PreparedValues
from conversations.models import Message, Thread
from conversations.services import thread_create

field = Thread._meta.get_field

# Rename a thread still at `status`, its activity now, its history's size told or unknown (None).
rename = PreparedUpdate(
    Thread,
    lambda thread_id, status, title, now, size: (
        Thread.objects.filter(id=thread_id, status=status), {"title": title, "last_activity_at": now,
                                                             "updated_at": now, "history_bytes": size}),
    Thread._meta.pk, field("status"), field("title"), field("last_activity_at"), field("history_bytes"),
)
# Continuous or not (a bool: part of the statement's shape), for threads with a message of `seq`.
set_continuous = PreparedUpdate(
    Thread,
    lambda seq, continuous: (
        Thread.objects.filter(Exists(Message.objects.filter(thread_id=OuterRef("pk"), seq=seq))),
        {"continuous": continuous}),
    Message._meta.get_field("seq"), field("continuous"),
)


@pytest.fixture
def threads(owner, colleague):
    return thread_create(owner.member), thread_create(colleague.member)


def test_each_call_writes_its_own_values_to_its_own_row_only(threads):
    mine, theirs = threads
    later = timezone.now() + timedelta(hours=1)
    assert rename(mine.id, Thread.Status.IDLE, "Trip to Zurich", later, 1234) == 1
    assert rename(theirs.id, Thread.Status.IDLE, "Budget", later + timedelta(minutes=5), 99) == 1
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert (mine.title, mine.last_activity_at, mine.updated_at, mine.history_bytes) == (
        "Trip to Zurich", later, later, 1234)
    assert (theirs.title, theirs.last_activity_at, theirs.history_bytes) == (
        "Budget", later + timedelta(minutes=5), 99)


def test_its_filter_holds_as_the_orms(threads):
    mine, _ = threads
    Thread.objects.filter(id=mine.id).update(status=Thread.Status.RESPONDING)
    assert rename(mine.id, Thread.Status.IDLE, "Not written", timezone.now(), 1) == 0
    mine.refresh_from_db()
    assert mine.title != "Not written"


def test_none_is_written_as_null_and_does_not_stick_to_the_shape(threads):
    mine, _ = threads
    now = timezone.now()
    assert rename(mine.id, Thread.Status.IDLE, "a", now, None) == 1
    assert Thread.objects.get(id=mine.id).history_bytes is None
    assert rename(mine.id, Thread.Status.IDLE, "b", now, 7) == 1
    assert Thread.objects.get(id=mine.id).history_bytes == 7


def test_bools_and_subqueries(threads):
    mine, theirs = threads
    Message.objects.create(thread=mine, seq=5, role=Message.Role.USER, content="x", created_at=timezone.now())
    assert set_continuous(5, True) == 1
    assert set_continuous(6, True) == 0
    assert Thread.objects.get(id=mine.id).continuous and not Thread.objects.get(id=theirs.id).continuous
    assert set_continuous(5, False) == 1
    assert not Thread.objects.get(id=mine.id).continuous


def test_the_sql_is_the_orms_and_is_counted(threads):
    mine, _ = threads
    now = timezone.now()
    with CaptureQueriesContext(connection) as orm:
        Thread.objects.filter(id=mine.id, status=Thread.Status.IDLE).update(
            title="t", last_activity_at=now, updated_at=now, history_bytes=3)
    with CaptureQueriesContext(connection) as prepared:
        rename(mine.id, Thread.Status.IDLE, "t", now, 3)
    assert [q["sql"] for q in prepared.captured_queries] == [q["sql"] for q in orm.captured_queries]


def test_a_failed_statement_marks_the_transaction_as_the_orm_does(threads):
    mine, _ = threads
    with transaction.atomic():
        with pytest.raises(IntegrityError):  # a title can't be NULL
            rename(mine.id, Thread.Status.IDLE, None, timezone.now(), 1)
        assert connection.needs_rollback


def test_what_it_cant_prepare_is_refused(threads):
    mine, _ = threads
    with pytest.raises(TypeError):
        rename(mine.id, Thread.Status.IDLE, "too few values")
    ignores_its_title = PreparedUpdate(
        Thread, lambda thread_id, title: (Thread.objects.filter(id=thread_id), {"title": "fixed"}),
        Thread._meta.pk, field("title"))
    with pytest.raises(CannotPrepare):
        ignores_its_title(mine.id, "lost")
    a_json_value = PreparedUpdate(
        Message, lambda sources: (Message.objects.filter(seq=0), {"after_reading": sources}),
        Message._meta.get_field("after_reading"))
    with pytest.raises(CannotPrepare):
        a_json_value(["mail from eve"])
    assert Thread.objects.get(id=mine.id).title != "fixed"


# A person's threads of an organization, newest activity first: ids and dates as the ORM gives them.
threads_of = PreparedValues(
    Thread,
    lambda organization_id, user_id: Thread.objects.filter(organization_id=organization_id, user_id=user_id)
    .order_by("-last_activity_at").values_list("id", "last_activity_at", "continuous"),
    field("organization"), field("user"),
)
locked_title = PreparedValues(
    Thread, lambda thread_id: Thread.objects.select_for_update().filter(id=thread_id).values_list("title"),
    Thread._meta.pk, for_update=True,
)


def test_a_prepared_read_gives_the_orms_rows(owner, colleague, threads):
    mine, theirs = threads
    orm = list(Thread.objects.filter(organization_id=owner.organization.id, user_id=owner.user.id)
               .order_by("-last_activity_at").values_list("id", "last_activity_at", "continuous"))
    assert threads_of(owner.organization.id, owner.user.id) == orm == [
        (mine.id, mine.last_activity_at, False)]
    assert threads_of(colleague.organization.id, colleague.user.id) == [(theirs.id, theirs.last_activity_at, False)]
    assert threads_of(owner.organization.id, 10**6) == []


def test_a_locking_read_says_that_it_locks(threads):
    mine, _ = threads
    with transaction.atomic():
        assert locked_title(mine.id) == [(mine.title,)]
    says_it_locks = PreparedValues(Thread, lambda thread_id: Thread.objects.filter(id=thread_id).values_list("title"),
                                   Thread._meta.pk, for_update=True)
    with transaction.atomic(), pytest.raises(CannotPrepare):
        says_it_locks(mine.id)


def test_naive_dates_under_a_product_without_time_zones(threads, settings):
    """A product with USE_TZ = False (the engine installs into others): its probes are naive too."""
    settings.USE_TZ = False
    stamp_only = PreparedUpdate(
        Thread, lambda thread_id, now: (Thread.objects.filter(id=thread_id), {"last_activity_at": now}),
        Thread._meta.pk, field("last_activity_at"))
    naive = timezone.now().replace(tzinfo=None, microsecond=0)
    assert stamp_only(threads[0].id, naive) == 1
    assert Thread.objects.filter(id=threads[0].id).values_list("last_activity_at", flat=True).get() == naive

"""An erasure is published by the task's name (assistant/maintenance.py does not
import its task module, which imports it): a real worker runs it to the end,
whether or not the publishing process imported the task module (the admin's web
process does not: the signature then goes straight to the broker)."""

import pytest
from django.contrib.auth import get_user_model

from assistant import maintenance
from assistant import maintenance_tasks as _registers_the_task  # noqa: F401  (as a worker does)
from assistant.models import Erasure
from config.celery import app
from tests.workers import celery_worker, wait_until

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def erased_by_a_worker(person, colleague) -> Erasure:
    with celery_worker(name="erasure"):
        erasure = maintenance.erasure_start(person.user)  # no transaction around: enqueued at once
        wait_until(lambda: Erasure.objects.get(id=erasure.id).status == Erasure.Status.DONE, timeout=60)
    erasure.refresh_from_db()
    assert not get_user_model().objects.filter(pk=person.user.pk).exists()
    assert get_user_model().objects.filter(pk=colleague.user.pk).exists()
    return erasure


def test_a_worker_runs_an_erasure_published_through_the_registered_task(owner, colleague):
    assert maintenance.ERASE_USER_TASK in app.tasks
    assert erased_by_a_worker(owner, colleague).batches >= 1


def test_a_worker_runs_an_erasure_published_by_a_process_without_the_task(owner, colleague, monkeypatch):
    monkeypatch.delitem(app.tasks, maintenance.ERASE_USER_TASK)
    assert erased_by_a_worker(owner, colleague).batches >= 1

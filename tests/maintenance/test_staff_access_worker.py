"""The staff access log's retention job in a real Celery worker process, as
beat publishes it: by name, on the default broker (a folder)."""

import pytest

from assistant_engine.foundation.broker_folders import ensure_broker_folders
from assistant_engine.organizations.models import StaffAccess
from config.celery import app as celery_app
from tests.admin.test_staff_access import aged
from tests.workers import celery_worker, wait_until

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_worker_runs_the_retention_job_published_by_name(owner):
    old, recent = aged(owner, 731), aged(owner, 1)
    [entry] = [e for e in celery_app.conf.beat_schedule.values() if e["task"] == "assistant.purge_staff_accesses"]

    with celery_worker(name="retention"):
        ensure_broker_folders()
        celery_app.send_task(entry["task"], **entry["options"])
        wait_until(lambda: not StaffAccess.objects.filter(pk=old.pk).exists(), timeout=60)

    assert list(StaffAccess.objects.all()) == [recent]

"""A service that says when it is down (issue 21): a turn still queued after
SERVICE_DOWN_SECONDS while no worker writes its heartbeat is reported in the
turn's status, in the person's language; a worker that beats (busy, or on
another queue) is not a service that is down."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from assistant.models import Turn, WorkerBeat
from assistant.service import SERVICE_DOWN_NOTICE, WORKER_BEAT_MISSED
from tests.assistant.test_chat_api import post_chat
from tests.workers import celery_worker, wait_until

GERMAN = ("Der Assistenzdienst antwortet gerade nicht. Ihre Nachricht bleibt gespeichert und wird ausgeführt, "
          "sobald er wieder verfügbar ist.")


def queued_for(person, seconds: float) -> Turn:
    """A turn no worker took (in a `db` test nothing is published), queued `seconds` ago."""
    turn = Turn.objects.get(id=post_chat(person, message="Hello").json()["turnId"])
    Turn.objects.filter(id=turn.id).update(created_at=timezone.now() - timedelta(seconds=seconds))
    return turn


def status(person, turn, **headers) -> dict:
    response = person.client.get(f"/api/turns/{turn.id}", **headers)
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.django_db
def test_a_turn_queued_past_the_wait_while_no_worker_beats_says_the_service_is_down(owner):
    turn = queued_for(owner, settings.SERVICE_DOWN_SECONDS + 1)
    body = status(owner, turn)
    assert body["status"] == "queued" and body["serviceDown"] is True and body["notice"] == SERVICE_DOWN_NOTICE
    assert status(owner, turn, HTTP_ACCEPT_LANGUAGE="de")["notice"] == GERMAN


@pytest.mark.django_db
def test_a_turn_queued_a_moment_ago_is_only_waiting(owner):
    turn = queued_for(owner, settings.SERVICE_DOWN_SECONDS - 5)
    assert {key: status(owner, turn)[key] for key in ("serviceDown", "notice")} == {"serviceDown": False,
                                                                                    "notice": None}


@pytest.mark.django_db
def test_a_worker_that_beats_lately_is_a_service_that_answers_and_a_stale_one_is_not(owner):
    turn = queued_for(owner, settings.SERVICE_DOWN_SECONDS + 1)
    now = timezone.now()
    WorkerBeat.objects.create(name="busy@host:1", beat_at=now - timedelta(seconds=1), started_at=now)
    assert status(owner, turn)["serviceDown"] is False
    stale = timedelta(seconds=settings.WORKER_BEAT_SECONDS * WORKER_BEAT_MISSED + 1)
    WorkerBeat.objects.filter(name="busy@host:1").update(beat_at=now - stale)
    assert status(owner, turn)["serviceDown"] is True


@pytest.mark.django_db
def test_an_ended_turn_is_never_reported_down(owner):
    turn = queued_for(owner, settings.SERVICE_DOWN_SECONDS + 1)
    Turn.objects.filter(id=turn.id).update(status=Turn.Status.FAILED)
    assert status(owner, turn)["serviceDown"] is False


@pytest.mark.django_db
def test_others_get_404_and_anonymous_401_on_a_turn_waiting_for_the_service(owner, colleague, outsider, anonymous):
    turn = queued_for(owner, settings.SERVICE_DOWN_SECONDS + 1)
    for other in (colleague, outsider):
        response = other.client.get(f"/api/turns/{turn.id}")
        assert response.status_code == 404 and response.json()["code"] == "not_found"
    assert anonymous.get(f"/api/turns/{turn.id}").status_code == 401


# --- Real worker processes -----------------------------------------------------------


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_with_no_worker_running_the_status_says_so_within_the_wait(owner):
    """Real time: no worker at all, the turn is published and nobody takes it."""
    turn = Turn.objects.get(id=post_chat(owner, message="Hello").json()["turnId"])
    assert status(owner, turn)["serviceDown"] is False
    wait_until(lambda: status(owner, turn)["serviceDown"], timeout=settings.SERVICE_DOWN_SECONDS + 5, interval=0.5)
    assert Turn.objects.get(id=turn.id).status == Turn.Status.QUEUED  # kept, for when the service is back


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_running_worker_beats_and_says_goodbye_when_it_stops(owner):
    """A worker on another queue beats but never takes the turn: the service is
    up (busy, as far as this turn knows); once it stops, it is down at once."""
    turn = queued_for(owner, settings.SERVICE_DOWN_SECONDS + 1)
    with celery_worker(name="elsewhere", queues="elsewhere"):
        beat = wait_until(lambda: WorkerBeat.objects.first(), timeout=30)
        assert beat.name.startswith("elsewhere@")
        assert status(owner, turn)["serviceDown"] is False
    assert not WorkerBeat.objects.exists()
    assert status(owner, turn)["serviceDown"] is True

"""One end-to-end turn through a real Celery worker process on the default
broker (a folder: no server), with the offline model and a workspace tool."""

import pytest

from assistant.models import Turn
from conversations.models import Message, Thread, ToolCall
from credits.models import CreditAccount
from tests.workers import celery_worker, wait_until
from workspace.models import Note

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_turn_runs_in_a_real_worker_with_the_offline_model(owner, settings):
    assert settings.CELERY_BROKER_URL == "filesystem://"
    Note.objects.create(organization=owner.organization, owner=owner.user, title="Zurich trip", body="Train at 9")
    with celery_worker(OFFLINE_MODEL_CHUNK_DELAY_MS="5"):
        response = owner.client.post("/api/chat", {"message": "Search my notes for Zurich"}, format="json")
        assert response.status_code == 202
        turn_id = response.json()["turnId"]
        wait_until(lambda: Turn.objects.get(id=turn_id).status in ("done", "failed"), timeout=90)
    turn = Turn.objects.get(id=turn_id)
    assert turn.status == "done", turn.failure_kind
    call = ToolCall.objects.get(message__turn_id=turn.id)
    assert call.name == "search_notes" and call.result["notes"][0]["title"] == "Zurich trip"
    final = Message.objects.filter(turn_id=turn.id, role="assistant").order_by("seq").last()
    assert "Zurich trip" in final.content
    assert Thread.objects.get(id=turn.thread_id).status == "idle"
    assert CreditAccount.objects.get(organization=owner.organization).reserved_micros == 0

"""Turns and maintenance jobs on a real Redis server and real worker processes:
a turn through Redis, a lost turn published again by the sweeper, a worker
SIGKILLed mid-turn and recovered by the stuck-turn job, two workers running
that job at once, and a Redis that is down at POST /api/chat."""

import json
import os
import signal
import time
from contextlib import ExitStack
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.utils import timezone

from assistant import chat, maintenance
from assistant.models import Turn
from config.celery import app as celery_app
from conversations.models import Message, Thread, ToolCall
from credits.models import CreditAccount, LedgerEntry
from credits.services import reservation_micros
from tests.maintenance.conftest import free_port, publishing_to, running_turn
from tests.workers import celery_worker, wait_until
from workspace.models import Note

pytestmark = [pytest.mark.redis, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


WORKER_SETTINGS = "tests.maintenance.worker_settings"


def redis_worker(redis, **options):
    return celery_worker(DJANGO_SETTINGS_MODULE=WORKER_SETTINGS, CELERY_BROKER_URL=redis.url, **options)


def log_path(name: str) -> Path:
    return Path(django_settings.RUN_DIR) / f"worker-{name}-{os.getpid()}.log"


def json_lines(path: Path) -> list[dict]:
    lines = []
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            lines.append(json.loads(line))
    return lines


def ended(turn_id) -> bool:
    return Turn.objects.get(id=turn_id).status in ("done", "failed")


def post_chat(person, message: str, conversation_id=None):
    body = {"message": message} | ({"conversationId": str(conversation_id)} if conversation_id else {})
    return person.client.post("/api/chat", body, format="json")


def test_turns_run_through_redis_and_a_lost_turn_is_published_again_by_the_sweeper(owner, redis_broker,
                                                                                   monkeypatch):
    Note.objects.create(organization=owner.organization, owner=owner.user, title="Quetzalcoatl trip",
                        body="Train to the xylophone-lagoon at 9")
    path = log_path("redis-turn")
    with redis_worker(redis_broker, name="redis-turn", log_path=path):
        response = post_chat(owner, "Search my notes for Quetzalcoatl")
        assert response.status_code == 202
        turn_id = response.json()["turnId"]
        wait_until(lambda: ended(turn_id), timeout=60)

        # A turn whose task the broker lost: it stays queued until the sweeper
        # publishes it again, through Redis, and the worker runs it.
        monkeypatch.setattr(chat, "enqueue_turn", lambda turn_id: None)
        lost = post_chat(owner, "Hello again", conversation_id=response.json()["conversationId"]).json()["turnId"]
        time.sleep(0.5)
        assert Turn.objects.get(id=lost).status == "queued"
        later = timezone.now() + timedelta(seconds=django_settings.ASSISTANT_QUEUED_SWEEP_SECONDS + 1)
        assert maintenance.sweep_queued_turns(now=later) == maintenance.SweepResult(requeued=1, failed=0)
        wait_until(lambda: ended(lost), timeout=60)

    # The tasks went through this Redis: kombu declared its queue binding there.
    assert redis_broker.client.exists("_kombu.binding.celery")
    for turn in Turn.objects.filter(id__in=[turn_id, lost]):
        assert turn.status == "done", turn.failure_kind
    assert Turn.objects.get(id=lost).enqueue_attempts == 2  # the submission's publish (lost), the sweeper's
    result = ToolCall.objects.get(message__turn_id=turn_id).result
    assert "xylophone-lagoon" in json.dumps(result)  # so the logs below had the chance to leak it
    # The worker's production logs: JSON lines with ids and counts, no text.
    finished = [line for line in json_lines(path) if line.get("event") == "turn_finished"]
    assert {line["turn_id"] for line in finished} == {turn_id, lost}
    assert all(line["duration_ms"] >= 0 and "tool_calls" in line for line in finished)
    assert "Quetzalcoatl" not in path.read_text() and "xylophone-lagoon" not in path.read_text()


def test_a_worker_killed_mid_turn_is_recovered_by_the_stuck_turn_job(owner, redis_broker, settings):
    with redis_worker(redis_broker, name="doomed", OFFLINE_MODEL_CHUNK_DELAY_MS="400") as worker:
        response = post_chat(owner, "Hello")  # the offline model's long help text, 4 words every 400 ms
        assert response.status_code == 202
        body = response.json()

        def streamed_reply():
            return Message.objects.filter(turn_id=body["turnId"], role="assistant").exclude(content="").first()

        wait_until(streamed_reply, timeout=60, interval=0.05)
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)
    reply = streamed_reply()
    turn = Turn.objects.get(id=body["turnId"])
    assert turn.status == "running" and reply.status == "streaming"

    # Past the turn's bound and grace, the job fails it.
    settings.ASSISTANT_TURN_SECONDS, settings.ASSISTANT_STUCK_GRACE_SECONDS = 1, 0
    assert maintenance.fail_stuck_turns(now=timezone.now() + timedelta(seconds=2)) == 1
    turn.refresh_from_db()
    assert (turn.status, turn.failure_kind) == ("failed", "timeout")
    assert turn.cost_micros == turn.reserved_micros == reservation_micros()
    assert list(LedgerEntry.objects.filter(turn_id=turn.id).values_list("kind", flat=True)) == ["reserve", "stuck"]
    account = CreditAccount.objects.get(organization=owner.organization)
    assert (account.reserved_micros, account.used_micros) == (0, turn.reserved_micros)
    assert Thread.objects.get(id=body["conversationId"]).status == "idle"
    kept = Message.objects.get(id=reply.id)
    assert kept.content == reply.content != "" and kept.status == "failed" and kept.notice
    assert Message.objects.filter(id=body["messageId"], content="Hello").exists()

    # The conversation can be used again, by a new worker.
    again = post_chat(owner, "Search my notes for anything", conversation_id=body["conversationId"])
    assert again.status_code == 202
    with redis_worker(redis_broker, name="rescuer"):
        wait_until(lambda: ended(again.json()["turnId"]), timeout=60)
    assert Turn.objects.get(id=again.json()["turnId"]).status == "done"
    assert Turn.objects.get(id=turn.id).status == "failed"  # never run again


def test_two_workers_running_the_stuck_turn_job_at_once_settle_each_turn_once(owner, colleague, redis_broker,
                                                                                 monkeypatch):
    monkeypatch.setattr(chat, "enqueue_turn", lambda turn_id: None)  # lost turns: only the job runs
    turns = [running_turn(person, message=f"m{i}") for i in range(10) for person in (owner, colleague)]
    account_before = CreditAccount.objects.get(organization=owner.organization)
    paths = {name: log_path(name) for name in ("stuck-a", "stuck-b")}
    with ExitStack() as stack:
        for name, path in paths.items():
            stack.enter_context(redis_worker(redis_broker, name=name, log_path=path, queues=name))
        for name in paths:
            celery_app.send_task("assistant.fail_stuck_turns", queue=name)

        def both_ran():
            return all(
                any(line.get("event") == "job_finished" for line in json_lines(path)) for path in paths.values()
            )

        wait_until(both_ran, timeout=60)
    failed = [line["failed"] for path in paths.values() for line in json_lines(path)
              if line.get("event") == "job_finished" and line["job"] == "fail_stuck_turns"]
    assert len(failed) == 2 and sum(failed) == len(turns)
    for turn in turns:
        closing = LedgerEntry.objects.filter(turn_id=turn.id, kind__in=LedgerEntry.CLOSING_KINDS)
        assert list(closing.values_list("kind", flat=True)) == ["stuck"]
    assert Turn.objects.filter(status="failed", failure_kind="timeout").count() == len(turns)
    account = CreditAccount.objects.get(organization=owner.organization)
    assert account.reserved_micros == account_before.reserved_micros - len(turns) * reservation_micros() == 0
    assert account.used_micros == account_before.used_micros + len(turns) * reservation_micros()


def test_a_redis_that_is_down_answers_503_at_once_and_leaves_nothing(owner):
    with publishing_to(f"redis://127.0.0.1:{free_port()}/0"):
        started = time.monotonic()
        response = post_chat(owner, "Hello")
        elapsed = time.monotonic() - started
    assert response.status_code == 503 and response.json()["code"] == "queue_unavailable"
    assert elapsed < 5
    assert not Thread.objects.exists() and not Message.objects.exists() and not Turn.objects.exists()
    assert CreditAccount.objects.get(organization=owner.organization).reserved_micros == 0
    assert list(LedgerEntry.objects.filter(turn_id__isnull=False).values_list("kind", flat=True)) == [
        "reserve", "release"]

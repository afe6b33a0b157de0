"""The maintenance jobs on the database alone: stuck turns, never-started turns,
idle purge, and the schedule that runs them."""

import logging
from datetime import timedelta

import pytest
from django.utils import timezone

from assistant import maintenance
from assistant.loop import claim_turn, run_turn
from assistant.models import ActionCard, Turn
from assistant.turn.outcome import NOTICES
from config.celery import app as celery_app
from conversations.models import Message, Thread, ToolCall
from credits.models import CreditAccount, LedgerEntry
from credits.services import reservation_micros
from tests.fakes.scripted import ScriptedClient, call, say
from tests.maintenance.conftest import queued_turn, running_turn
from tests.races import race


def account_of(person) -> CreditAccount:
    return CreditAccount.objects.get(organization=person.organization)


# --- Stuck turns ------------------------------------------------------------------


def test_a_stuck_turn_fails_as_timeout_keeps_its_reservation_and_frees_the_thread(owner):
    turn = running_turn(owner, partial="Half a rep")
    assert maintenance.fail_stuck_turns() == 1

    turn.refresh_from_db()
    assert (turn.status, turn.failure_kind) == ("failed", "timeout")
    assert turn.cost_micros == turn.reserved_micros == reservation_micros() > 0
    stuck = LedgerEntry.objects.get(turn_id=turn.id, kind__in=LedgerEntry.CLOSING_KINDS)
    assert (stuck.kind, stuck.used_delta, stuck.reserved_delta) == (
        "stuck", turn.reserved_micros, -turn.reserved_micros)
    account = account_of(owner)
    assert (account.reserved_micros, account.used_micros) == (0, turn.reserved_micros)
    assert Thread.objects.get(id=turn.thread_id).status == "idle"
    reply = Message.objects.get(turn_id=turn.id, role="assistant")
    assert (reply.content, reply.status, reply.notice) == ("Half a rep", "failed", NOTICES["timeout"])


def test_failing_stuck_turns_again_changes_nothing(owner):
    running_turn(owner)
    assert maintenance.fail_stuck_turns() == 1
    before = list(LedgerEntry.objects.values_list("id", flat=True))
    assert maintenance.fail_stuck_turns() == 0
    assert list(LedgerEntry.objects.values_list("id", flat=True)) == before


def test_a_turn_within_its_bound_and_grace_is_left_running(owner, settings):
    bound = settings.ASSISTANT_TURN_SECONDS + settings.ASSISTANT_STUCK_GRACE_SECONDS
    turn = running_turn(owner, seconds_ago=bound - 5)
    assert maintenance.fail_stuck_turns() == 0
    turn.refresh_from_db()
    assert turn.status == "running" and not LedgerEntry.objects.filter(turn_id=turn.id, kind="stuck").exists()
    # The same turn, 10 s later, is stuck.
    assert maintenance.fail_stuck_turns(now=timezone.now() + timedelta(seconds=10)) == 1


def test_a_stuck_turn_keeps_the_usage_it_stored_and_its_tool_calls(owner):
    turn = running_turn(owner)
    reply = Message.objects.get(turn_id=turn.id, role="assistant")
    ToolCall.objects.create(message=reply, tool_use_id="t1", name="search_notes", input={"query": "x"},
                            created_at=timezone.now())
    Turn.objects.filter(id=turn.id).update(input_tokens=120, output_tokens=7, steps=1, tool_calls=1)
    maintenance.fail_stuck_turns()
    turn.refresh_from_db()
    assert (turn.input_tokens, turn.output_tokens, turn.steps, turn.tool_calls) == (120, 7, 1, 1)
    assert ToolCall.objects.filter(message=reply, finished_at__isnull=True).count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_stuck_jobs_at_once_fail_each_turn_once(owner, colleague):
    turns = [running_turn(person, message=f"m{i}") for i in range(6) for person in (owner, colleague)]
    results = race(2, lambda index: maintenance.fail_stuck_turns())
    assert sum(results) == len(turns)
    for turn in turns:
        assert LedgerEntry.objects.filter(turn_id=turn.id, kind__in=LedgerEntry.CLOSING_KINDS).count() == 1
    account = account_of(owner)
    assert account.reserved_micros == 0 and account.used_micros == len(turns) * reservation_micros()


def test_a_turn_finished_by_its_worker_is_not_touched(owner):
    turn = queued_turn(owner)
    run_turn(turn.id, client=ScriptedClient(say("Done here.")))
    Turn.objects.filter(id=turn.id).update(started_at=timezone.now() - timedelta(days=1))
    assert maintenance.fail_stuck_turns() == 0
    assert LedgerEntry.objects.get(turn_id=turn.id, kind__in=LedgerEntry.CLOSING_KINDS).kind == "settle"


# --- Turns no worker took -------------------------------------------------------


@pytest.fixture
def published(monkeypatch):
    """What the sweeper publishes (the broker itself is tested with Redis)."""
    from assistant.tasks import run_turn_task

    sent = []
    monkeypatch.setattr(run_turn_task, "apply_async", lambda args, **options: sent.append(args[0]))
    return sent


def later(seconds: float):
    return timezone.now() + timedelta(seconds=seconds)


def test_a_fresh_queued_turn_is_left_alone(owner, published):
    queued_turn(owner)
    assert maintenance.sweep_queued_turns() == maintenance.SweepResult(requeued=0, failed=0)
    assert published == []


def test_a_turn_queued_too_long_is_published_again_once_then_failed_without_cost(owner, settings, published):
    turn = queued_turn(owner)
    Turn.objects.filter(id=turn.id).update(enqueue_attempts=1)  # as chat_submit's publish left it
    age = settings.ASSISTANT_QUEUED_SWEEP_SECONDS

    assert maintenance.sweep_queued_turns(now=later(age + 1)).requeued == 1
    assert published == [str(turn.id)]
    turn.refresh_from_db()
    assert turn.status == "queued" and turn.enqueue_attempts == 2 and turn.requeued_at is not None
    # Not again: the re-enqueue gets its own full wait.
    assert maintenance.sweep_queued_turns(now=later(age + 2)) == maintenance.SweepResult(0, 0)

    assert maintenance.sweep_queued_turns(now=later(2 * age + 5)) == maintenance.SweepResult(0, 1)
    assert published == [str(turn.id)]
    turn.refresh_from_db()
    assert (turn.status, turn.failure_kind, turn.cost_micros) == ("failed", "queue", 0)
    closing = LedgerEntry.objects.get(turn_id=turn.id, kind__in=LedgerEntry.CLOSING_KINDS)
    assert (closing.kind, closing.used_delta) == ("release", 0)
    account = account_of(owner)
    assert (account.reserved_micros, account.used_micros) == (0, 0)
    assert Thread.objects.get(id=turn.thread_id).status == "idle"
    notice = Message.objects.get(turn_id=turn.id, role="assistant")
    assert (notice.status, notice.notice) == ("failed", NOTICES["queue"])
    # A worker that finally gets the task runs nothing.
    assert not claim_turn(turn.id)


def test_a_turn_claimed_by_a_worker_is_not_failed_by_the_sweeper(owner, settings, published):
    turn = queued_turn(owner)
    Turn.objects.filter(id=turn.id).update(enqueue_attempts=2)
    assert claim_turn(turn.id)
    assert maintenance.sweep_queued_turns(now=later(10 * settings.ASSISTANT_QUEUED_SWEEP_SECONDS)).failed == 0
    assert Turn.objects.get(id=turn.id).status == "running"


def test_a_requeue_the_broker_refuses_is_failed_at_the_next_sweep(owner, settings, monkeypatch, caplog):
    from assistant.tasks import run_turn_task

    def down(*args, **kwargs):
        raise ConnectionRefusedError("broker down")

    monkeypatch.setattr(run_turn_task, "apply_async", down)
    turn = queued_turn(owner)
    age = settings.ASSISTANT_QUEUED_SWEEP_SECONDS
    assert maintenance.sweep_queued_turns(now=later(age + 1)) == maintenance.SweepResult(0, 0)
    assert any(r.getMessage() == "turn_requeue_failed" for r in caplog.records)
    assert maintenance.sweep_queued_turns(now=later(2 * age + 5)).failed == 1
    assert Turn.objects.get(id=turn.id).failure_kind == "queue"


# --- Idle purge ---------------------------------------------------------------------


def aged(turn: Turn, days: float) -> Thread:
    thread = Thread.objects.get(id=turn.thread_id)
    thread.last_activity_at = timezone.now() - timedelta(days=days)
    thread.save(update_fields=["last_activity_at"])
    return thread


def conversation_with_card(person, days: float) -> Thread:
    """A finished turn with a tool call and a pending card, idle for `days`."""
    turn = queued_turn(person, message="Email the team")
    client = ScriptedClient(
        call(("send_email", {"to": "team@example.com", "subject": "Hi", "body": "Hello team"})), say("Card ready.")
    )
    run_turn(turn.id, client=client)
    assert ActionCard.objects.filter(thread_id=turn.thread_id).exists()
    return aged(turn, days)


def test_idle_threads_are_purged_in_batches_with_their_messages_tool_calls_and_cards(owner, colleague, settings,
                                                                                     caplog):
    caplog.set_level(logging.INFO, logger="assistant.jobs")
    days = settings.ASSISTANT_IDLE_PURGE_DAYS
    old = [conversation_with_card(p, days + 1) for p in (owner, owner, owner, colleague, colleague)]
    recent = conversation_with_card(owner, days - 1)
    answering = running_turn(owner)
    Thread.objects.filter(id=answering.thread_id).update(last_activity_at=timezone.now() - timedelta(days=days + 30))
    old_turns = list(Turn.objects.filter(thread__in=old).values_list("id", flat=True))

    assert maintenance.purge_idle_threads(batch_size=2) == 5

    assert set(Thread.objects.values_list("id", flat=True)) == {recent.id, answering.thread_id}
    assert not Message.objects.filter(thread_id__in=[t.id for t in old]).exists()
    assert ToolCall.objects.count() == ActionCard.objects.count() == 1  # the recent conversation's
    # Turns stay for accounting, without their thread.
    assert Turn.objects.filter(id__in=old_turns, thread__isnull=True).count() == len(old_turns) == 5
    line = next(r for r in caplog.records if r.getMessage() == "job_finished" and r.job == "purge_idle_threads")
    assert (line.threads, line.batches, line.cards, line.tool_calls) == (5, 3, 5, 5)
    assert line.messages == 5 * 3  # the person's message, the card's step, the closing reply
    assert maintenance.purge_idle_threads(batch_size=2) == 0


# --- The schedule -----------------------------------------------------------------


def test_the_beat_schedule_runs_every_maintenance_job_and_the_worker_knows_them():
    celery_app.loader.import_default_modules()
    scheduled = {entry["task"] for entry in celery_app.conf.beat_schedule.values()}
    assert scheduled == {
        "assistant.fail_stuck_turns", "assistant.sweep_queued_turns", "assistant.purge_idle_threads",
        "assistant.continue_erasures", "assistant.expire_cards", "assistant.purge_staff_accesses",
        "telegram.purge_received_updates",
        "assistant.sweep_interrupted_cards",
        "assistant.purge_expired_tokens",
    }
    assert scheduled | {"assistant.erase_user", "assistant.run_turn"} <= set(celery_app.tasks)

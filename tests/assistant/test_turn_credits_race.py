"""8 conversations of one organization run many-step turns at once against a
balance that covers a fraction of them: the holds before each call serialize
on the account's row lock (PostgreSQL) or the write lock (SQLite)."""

import pytest

from assistant.loop import run_turn
from assistant.models import Turn
from assistant_engine.providers.clients.base import Usage
from conversations.models import Thread
from credits.models import CreditAccount
from credits.money import micros_from_credits
from credits.selectors import credits_audit_mismatches
from tests.assistant.conftest import Clock, submit
from tests.fakes.scripted import ScriptedClient, call, say
from tests.races import race

CONVERSATIONS, STEPS, GRANTED_CREDITS = 8, 12, 40


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_racing_many_step_turns_never_spend_more_than_granted(owner, acme):
    acme.monthly_credits = GRANTED_CREDITS
    acme.save(update_fields=["monthly_credits"])
    turns = [submit(owner, f"question {index}") for index in range(CONVERSATIONS)]
    # Each step costs 0.7 credits; all of them would cost 8 × 12 × 0.7 = 67 credits.
    script = [call(("search_notes", {"query": "x"}), text="Looking.", usage=Usage(2_000, 1_000))] * (STEPS - 1)
    clients = [ScriptedClient(*script, say("Done.", usage=Usage(2_000, 1_000))) for _ in turns]

    outcomes = race(CONVERSATIONS, lambda index: run_turn(turns[index].id, client=clients[index], clock=Clock()))

    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    finished = list(Turn.objects.filter(id__in=[t.id for t in turns]))
    assert all(t.status in ("done", "failed") and t.finished_at for t in finished)
    assert {t.failure_kind for t in finished if t.status == "failed"} == {"credits"}
    assert any(t.status == "failed" for t in finished) and any(len(c.requests) > 1 for c in clients)
    account = CreditAccount.objects.get(organization=acme)
    assert account.granted_micros == micros_from_credits(GRANTED_CREDITS)
    assert account.used_micros <= account.granted_micros and account.reserved_micros == 0
    assert account.used_micros == sum(t.cost_micros for t in finished)
    assert not Thread.objects.filter(status=Thread.Status.RESPONDING).exists()
    assert credits_audit_mismatches() == []

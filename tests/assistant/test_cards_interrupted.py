"""A card whose perform was cut short, and data changed between the claim and the action.

"Cut short" is the state a killed process leaves: the pending→confirmed claim
committed, no outcome recorded. The sweep marks such a card `outcome_unknown`
after ASSISTANT_CARD_OUTCOME_TIMEOUT_SECONDS, never performs it again, shows it
on the card and tells the model at the next turn.
"""

import signal
import socket
import subprocess
import sys
from datetime import timedelta

import pytest
from django.core import mail
from django.db import transaction
from django.utils import timezone

from assistant import card_events, cards
from assistant.card_tasks import sweep_interrupted_cards_task
from assistant.models import ActionCard
from tests.assistant.test_cards import EMAIL, confirm, delete_card, propose_card
from tests.web.conftest import web_client
from tests.workers import PROJECT, worker_environment
from workspace.models import Note, SentEmail

pytestmark = pytest.mark.django_db


def cut_short(card: ActionCard, *, seconds_ago: float) -> ActionCard:
    """The claim committed `seconds_ago`, then the process died: no outcome."""
    ActionCard.objects.filter(id=card.id).update(
        status="confirmed", decided_at=timezone.now() - timedelta(seconds=seconds_ago), result=None,
        event_delivered_at=timezone.now(),  # the claim's own event was already told
    )
    return ActionCard.objects.get(id=card.id)


def test_a_card_cut_short_past_the_timeout_becomes_outcome_unknown(owner, settings):
    settings.ASSISTANT_CARD_OUTCOME_TIMEOUT_SECONDS = 600
    old = cut_short(propose_card(owner, "send_email", EMAIL), seconds_ago=601)
    recent = cut_short(propose_card(owner, "send_email", EMAIL), seconds_ago=599)
    assert sweep_interrupted_cards_task() == 1
    old.refresh_from_db()
    recent.refresh_from_db()
    assert old.status == "outcome_unknown" and old.error == cards.INTERRUPTED_ERROR
    assert old.event_delivered_at is None  # a new event for the model
    assert recent.status == "confirmed" and recent.result is None  # may still be running
    assert sweep_interrupted_cards_task() == 0  # once


def test_a_card_with_its_outcome_recorded_is_never_swept(owner, notes, settings):
    settings.ASSISTANT_CARD_OUTCOME_TIMEOUT_SECONDS = 60
    done = confirm(owner, delete_card(owner, notes["zurich"]))
    ActionCard.objects.filter(id=done.id).update(decided_at=timezone.now() - timedelta(hours=2))
    assert cards.cards_mark_interrupted() == 0
    assert ActionCard.objects.get(id=done.id).status == "confirmed"


def test_the_sweep_never_performs_the_action_again(owner, settings):
    settings.ASSISTANT_CARD_OUTCOME_TIMEOUT_SECONDS = 60
    card = cut_short(propose_card(owner, "send_email", EMAIL), seconds_ago=3600)
    cards.cards_mark_interrupted()
    assert mail.outbox == []
    with pytest.raises(cards.CardDecided):  # and no click can start it again
        confirm(owner, card)
    assert mail.outbox == []


def test_the_model_is_told_at_the_next_turn_once(owner, settings):
    settings.ASSISTANT_CARD_OUTCOME_TIMEOUT_SECONDS = 60
    card = cut_short(propose_card(owner, "send_email", EMAIL), seconds_ago=3600)
    assert card_events.events_for_next_turn(card.thread_id) == ""  # nothing new before the sweep
    cards.cards_mark_interrupted()
    with transaction.atomic():
        block = card_events.events_for_next_turn(card.thread_id)
    assert "outcome_unknown" in block and str(card.id) in block
    assert "may or may not have been done" in block and "not retried" in block
    assert card_events.events_for_next_turn(card.thread_id) == ""


def test_the_person_sees_it_on_the_card(owner, settings):
    settings.ASSISTANT_CARD_OUTCOME_TIMEOUT_SECONDS = 60
    card = cut_short(propose_card(owner, "send_email", EMAIL), seconds_ago=3600)
    cards.cards_mark_interrupted()
    body = owner.client.get(f"/api/cards/{card.id}").json()
    assert body["status"] == "outcome_unknown" and body["error"] == cards.INTERRUPTED_ERROR
    html = web_client(owner).get(f"/cards/{card.id}/").content.decode()
    assert "Outcome unknown" in html and "may or may not have been done" in html
    assert 'data-card-action="confirm"' not in html


def test_an_outcome_arriving_after_the_sweep_replaces_the_unknown(owner, notes, settings):
    settings.ASSISTANT_CARD_OUTCOME_TIMEOUT_SECONDS = 60
    card = cut_short(delete_card(owner, notes["zurich"]), seconds_ago=3600)
    cards.cards_mark_interrupted()
    cards._record_outcome(card.id, result={"deleted": True})
    card.refresh_from_db()
    assert card.status == "confirmed" and card.result == {"deleted": True} and card.error == ""
    assert card.event_delivered_at is None


@pytest.mark.django_db(transaction=True)
def test_a_note_edited_between_the_claim_and_the_action_is_caught(owner, notes, monkeypatch):
    """The click's check passes; the note changes right after the claim
    commits; the perform step's own check stops the delete."""
    card = delete_card(owner, notes["zurich"])
    decide = cards._decide

    def decide_then_edit_after_commit(card, status, now, **kwargs):
        decide(card, status, now, **kwargs)
        if status == "confirmed":
            transaction.on_commit(
                lambda: Note.objects.filter(id=notes["zurich"].id).update(body="Edited after the click.")
            )

    monkeypatch.setattr(cards, "_decide", decide_then_edit_after_commit)
    decided = confirm(owner, card)
    assert Note.objects.filter(id=notes["zurich"].id).exists()  # not deleted
    assert decided.status == "failed" and decided.error == cards.STALE_ERROR and decided.result is None


@pytest.mark.django_db(transaction=True)
def test_a_sender_changed_between_the_claim_and_the_send_is_caught(owner, monkeypatch):
    """The same check before a send (outside any transaction): the address a
    mail would go out from changed after the click; nothing is sent."""
    card = propose_card(owner, "send_email", EMAIL)
    decide = cards._decide

    def decide_then_change_the_sender_after_commit(card, status, now, **kwargs):
        decide(card, status, now, **kwargs)
        if status == "confirmed":
            transaction.on_commit(lambda: type(owner.user).objects.filter(id=owner.user.id).update(
                email="someone.else@example.com"))

    monkeypatch.setattr(cards, "_decide", decide_then_change_the_sender_after_commit)
    decided = confirm(owner, card)
    assert mail.outbox == [] and not SentEmail.objects.exists()
    assert decided.status == "failed" and decided.error == cards.STALE_ERROR


def test_the_conversation_page_says_what_the_model_was_told():
    from assistant_engine.web.presenters import event_lines

    line = '{"kind": "outcome_unknown", "card_id": "x", "tool_name": "send_email", "summary": "..."}'
    assert event_lines(line, {"send_email": "Send an email"}) == [
        "The assistant was told that “Send an email” was interrupted and may or may not have been done."
    ]


# --- The real thing: a process killed in the middle of a send ---------------------

CONFIRM_IN_A_PROCESS = """
import sys
import django
django.setup()
from django.test.utils import override_settings
from assistant import card_events, cards
from assistant_engine.organizations.members import Member

organization_id, user_id, card_id, shown_hash, smtp_port = sys.argv[1:]
member = Member(organization_id=int(organization_id), user_id=int(user_id), role="member")
with override_settings(EMAIL_BACKEND="django.core.mail.backends.smtp.EmailBackend", EMAIL_HOST="127.0.0.1",
                       EMAIL_PORT=int(smtp_port), EMAIL_TIMEOUT=600):
    cards.card_confirm(member, card_id=card_id, shown_hash=shown_hash)
"""


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_process_killed_while_sending_leaves_a_card_the_sweep_marks_unknown(owner, settings):
    """The click's process claims the card, connects to the mail server (which
    never answers), and is killed. Nothing is sent, nothing retries it; the
    sweep says the outcome is unknown."""
    card = propose_card(owner, "send_email", EMAIL)
    with socket.socket() as mail_server:
        mail_server.bind(("127.0.0.1", 0))
        mail_server.listen(1)
        mail_server.settimeout(60)
        process = subprocess.Popen(
            [sys.executable, "-c", CONFIRM_IN_A_PROCESS, str(owner.organization.id), str(owner.user.id),
             str(card.id), card.snapshot_hash, str(mail_server.getsockname()[1])],
            cwd=PROJECT, env=worker_environment(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )
        try:
            connection, _ = mail_server.accept()  # the action is under way: the claim has committed
            with connection:
                assert ActionCard.objects.get(id=card.id).status == "confirmed"
                process.send_signal(signal.SIGKILL)
                process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
    assert ActionCard.objects.get(id=card.id).result is None  # stuck: confirmed, no outcome
    assert cards.cards_mark_interrupted(
        now=timezone.now() + timedelta(seconds=settings.ASSISTANT_CARD_OUTCOME_TIMEOUT_SECONDS + 1)
    ) == 1
    assert ActionCard.objects.get(id=card.id).status == "outcome_unknown"
    assert not SentEmail.objects.exists()
    with transaction.atomic():
        assert "outcome_unknown" in card_events.events_for_next_turn(card.thread_id)

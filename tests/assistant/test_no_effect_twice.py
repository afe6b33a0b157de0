"""Issue 22, point 8: no effect twice. A card whose action has the fingerprint
of one already confirmed in its conversation says so (API, stream) and is
confirmed only with an explicit acknowledgement (409 `repeat` without); the
offline demo model, told of the confirmed card, does not propose it again."""

import pytest
from django.core import mail
from django.utils.dateparse import parse_datetime

from assistant.loop import run_turn
from assistant.models import ActionCard, Turn
from assistant_engine.providers.clients.offline import OfflineModelClient
from conversations.models import Message
from tests.assistant.conftest import Clock, play
from tests.assistant.test_cards import propose_card
from tests.fakes.scripted import ScriptedClient, call, say

pytestmark = pytest.mark.django_db

SEND = ("send_email", {"to": "bob@example.com", "subject": "Lunch", "body": "Noon at the usual place?"})


def confirm(person, card, **extra):
    return person.client.post(f"/api/cards/{card.id}/confirm", {"hash": card.snapshot_hash, **extra}, format="json")


def regenerate(person, thread_id, client):
    response = person.client.post(f"/api/conversations/{thread_id}/regenerate", format="json")
    assert response.status_code == 202, response.content
    turn_id = response.json()["turnId"]
    Turn.objects.filter(id=turn_id).update(model_option="offline")
    run_turn(turn_id, client=client, clock=Clock())
    return turn_id


def test_regenerate_after_a_sent_email_gives_a_card_that_says_so_and_needs_confirm_again(owner):
    first = play(owner, ScriptedClient(call(SEND), say("Card.")), message="Ask Bob to lunch")
    sent = ActionCard.objects.get()
    assert confirm(owner, sent).status_code == 200 and len(mail.outbox) == 1
    sent.refresh_from_db()

    turn_id = regenerate(owner, first.thread_id, ScriptedClient(call(SEND), say("Card again.")))
    twin = ActionCard.objects.get(turn_id=turn_id)
    shown = owner.client.get(f"/api/cards/{twin.id}").json()
    assert parse_datetime(shown["identicalDoneAt"]) == sent.decided_at
    kinds = [notice["kind"] for notice in shown["presentation"]["notices"]]
    assert kinds == ["repeat"] and shown["presentation"]["acknowledgementRequired"] is True
    assert shown["presentation"]["confirmLabel"] == "Confirm again"
    # The model is told too, in the proposal's result.
    assert "already confirmed" in twin.tool_call.result["repeat"]

    refused = confirm(owner, twin)
    assert refused.status_code == 409 and refused.json()["code"] == "repeat"
    assert refused.json()["card"]["status"] == "pending" and len(mail.outbox) == 1
    assert confirm(owner, twin, acknowledgeRepeat="yes").status_code == 400  # a JSON boolean, nothing else
    again = confirm(owner, twin, acknowledgeRepeat=True)
    assert again.status_code == 200 and again.json()["status"] == "confirmed" and len(mail.outbox) == 2


def test_a_pending_twin_says_so_once_the_other_is_confirmed(owner):
    first = propose_card(owner, *SEND)
    second = propose_card(owner, *SEND, thread=first.thread)
    assert second.identical_done_at is None  # nothing was done when it was proposed
    assert confirm(owner, first).status_code == 200
    second.refresh_from_db()
    assert second.identical_done_at is not None
    assert confirm(owner, second).json()["code"] == "repeat" and len(mail.outbox) == 1


def test_an_identical_email_in_another_conversation_is_not_a_repeat(owner):
    first = propose_card(owner, *SEND)
    assert confirm(owner, first).status_code == 200
    other = propose_card(owner, *SEND)
    assert other.identical_done_at is None and confirm(owner, other).status_code == 200


def test_a_cancelled_card_is_no_reason_to_ask_twice(owner):
    first = propose_card(owner, *SEND)
    owner.client.post(f"/api/cards/{first.id}/cancel", {}, format="json")
    second = propose_card(owner, *SEND, thread=first.thread)
    assert second.identical_done_at is None and confirm(owner, second).status_code == 200


def test_another_persons_confirm_with_the_flag_is_still_404(owner, colleague):
    card = propose_card(owner, *SEND)
    assert confirm(colleague, card, acknowledgeRepeat=True).status_code == 404


def test_the_offline_model_told_of_the_sent_email_does_not_propose_it_again(owner):
    request = "email See you at noon to alice@example.com"
    first = play(owner, OfflineModelClient(), message=request)
    card = ActionCard.objects.get()
    assert confirm(owner, card).status_code == 200 and len(mail.outbox) == 1

    turn_id = regenerate(owner, first.thread_id, OfflineModelClient())
    assert not ActionCard.objects.filter(turn_id=turn_id).exists()
    reply = Message.objects.get(turn_id=turn_id, role="assistant")
    assert "not proposing it a second time" in reply.content
    # Asked for another e-mail, it proposes that one.
    play(owner, OfflineModelClient(), message="email See you at one to alice@example.com",
         conversation_id=first.thread_id)
    assert ActionCard.objects.filter(status="pending").count() == 1

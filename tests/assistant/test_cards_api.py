"""The card endpoints: GET /api/cards/{id}, POST …/confirm {"hash"}, POST …/cancel;
and the cards in GET /api/conversations/{id}."""

import uuid
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from assistant.models import ActionCard
from assistant_engine.providers.clients.offline import OfflineModelClient
from tests.assistant.conftest import play
from tests.assistant.test_cards import EMAIL, delete_card, propose_card
from tests.conversations.factories import stored_conversation
from workspace.models import Note


def card_url(card_id, action=""):
    return f"/api/cards/{card_id}" + (f"/{action}" if action else "")


def conversation_url(thread_id):
    return f"/api/conversations/{thread_id}"


def post_confirm(client, card, body=None):
    return client.post(card_url(card.id, "confirm"), {"hash": card.snapshot_hash} if body is None else body,
                       format="json")


def post_cancel(client, card, body=None):
    return client.post(card_url(card.id, "cancel"), body or {}, format="json")


ENDPOINTS = {
    "read": lambda client, card: client.get(card_url(card.id)),
    "confirm": post_confirm,
    "cancel": post_cancel,
}
STATUS_AFTER = {"read": "pending", "confirm": "confirmed", "cancel": "cancelled"}


# --- The cast on every endpoint --------------------------------------------------------


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_the_owner_reads_confirms_or_cancels_their_card(owner, notes, endpoint):
    card = delete_card(owner, notes["zurich"])
    response = ENDPOINTS[endpoint](owner.client, card)
    assert response.status_code == 200
    body = response.json()
    assert body["id"] == str(card.id) and body["status"] == STATUS_AFTER[endpoint]
    assert body["hash"] == card.snapshot_hash and body["conversationId"] == str(card.thread_id)
    assert Note.objects.filter(id=notes["zurich"].id).exists() is (endpoint != "confirm")


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize("who", ["colleague", "outsider"])
def test_others_get_404_and_change_nothing(owner, colleague, outsider, notes, endpoint, who):
    card = delete_card(owner, notes["zurich"])
    person = {"colleague": colleague, "outsider": outsider}[who]
    response = ENDPOINTS[endpoint](person.client, card)
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    assert ActionCard.objects.get(id=card.id).status == "pending"
    assert Note.objects.filter(id=notes["zurich"].id).exists()


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_anonymous_gets_401_and_changes_nothing(owner, anonymous, notes, endpoint):
    card = delete_card(owner, notes["zurich"])
    assert ENDPOINTS[endpoint](anonymous, card).status_code == 401
    assert ActionCard.objects.get(id=card.id).status == "pending"


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_a_card_that_does_not_exist_is_404(owner, notes, endpoint):
    card = delete_card(owner, notes["zurich"])
    card.id = uuid.uuid4()
    assert ENDPOINTS[endpoint](owner.client, card).status_code == 404


@pytest.mark.parametrize("path", ["/api/cards/not-a-uuid", "/api/cards/12/confirm", "/api/cards/x/cancel"])
def test_a_malformed_id_is_a_clear_400(owner, path):
    response = owner.client.get(path) if path.endswith("uuid") else owner.client.post(
        path, {"hash": "0" * 64}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_id" and "id" in response.json()["fields"]


# --- Confirm ------------------------------------------------------------------------


def test_a_confirmed_send_answers_with_its_result(owner):
    card = propose_card(owner, "send_email", EMAIL)
    body = post_confirm(owner.client, card).json()
    assert body["status"] == "confirmed" and body["decidedAt"] and body["error"] is None
    assert body["result"]["to"] == "bob@example.com" and len(mail.outbox) == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "hash"),
        ({"hash": None}, "hash"),
        ({"hash": 12}, "hash"),
        ({"hash": "abc"}, "hash"),
        ({"hash": "A" * 64}, "hash"),
        ({"hash": "0" * 64, "force": True}, "force"),
    ],
)
def test_a_bad_confirm_body_is_400_and_performs_nothing(owner, notes, body, field):
    card = delete_card(owner, notes["zurich"])
    response = post_confirm(owner.client, card, body)
    assert response.status_code == 400 and response.json()["code"] == "invalid"
    assert field in response.json()["fields"]
    assert ActionCard.objects.get(id=card.id).status == "pending"
    assert Note.objects.filter(id=notes["zurich"].id).exists()


def test_confirming_with_another_hash_is_409_stale_and_the_card_stays_pending(owner, notes):
    card = delete_card(owner, notes["zurich"])
    response = post_confirm(owner.client, card, {"hash": "0" * 64})
    assert response.status_code == 409 and response.json()["code"] == "stale"
    assert response.json()["card"]["status"] == "pending"
    assert Note.objects.filter(id=notes["zurich"].id).exists()


def test_a_note_edited_since_the_card_is_409_stale_and_the_card_fails(owner, notes):
    card = delete_card(owner, notes["zurich"])
    Note.objects.filter(id=notes["zurich"].id).update(title="Zurich trip (cancelled)")
    response = post_confirm(owner.client, card)
    assert response.status_code == 409 and response.json()["code"] == "stale"
    assert response.json()["card"]["status"] == "failed"
    assert Note.objects.filter(id=notes["zurich"].id).exists()


def test_confirming_twice_is_409_decided_and_performs_once(owner):
    card = propose_card(owner, "send_email", EMAIL)
    assert post_confirm(owner.client, card).status_code == 200
    response = post_confirm(owner.client, card)
    assert response.status_code == 409 and response.json()["code"] == "decided"
    assert response.json()["card"]["status"] == "confirmed" and len(mail.outbox) == 1


def test_confirming_an_expired_card_is_410_and_performs_nothing(owner, notes):
    card = delete_card(owner, notes["zurich"])
    ActionCard.objects.filter(id=card.id).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = post_confirm(owner.client, card)
    assert response.status_code == 410 and response.json()["code"] == "expired"
    assert response.json()["card"]["status"] == "expired"
    assert Note.objects.filter(id=notes["zurich"].id).exists()


# --- Cancel -------------------------------------------------------------------------


def test_cancel_refuses_any_field(owner, notes):
    card = delete_card(owner, notes["zurich"])
    response = post_cancel(owner.client, card, {"reason": "no"})
    assert response.status_code == 400 and "reason" in response.json()["fields"]
    assert ActionCard.objects.get(id=card.id).status == "pending"


def test_cancelling_a_decided_card_is_409_decided(owner, notes):
    card = delete_card(owner, notes["zurich"])
    post_confirm(owner.client, card)
    response = post_cancel(owner.client, card)
    assert response.status_code == 409 and response.json()["code"] == "decided"


def test_cancelling_an_expired_card_is_410(owner, notes):
    card = delete_card(owner, notes["zurich"])
    ActionCard.objects.filter(id=card.id).update(expires_at=timezone.now() - timedelta(minutes=5))
    response = post_cancel(owner.client, card)
    assert response.status_code == 410 and response.json()["code"] == "expired"


# --- Cards in the conversation ---------------------------------------------------------


def test_the_conversation_lists_its_cards_with_what_the_person_needs_to_decide(owner, notes):
    turn = play(owner, OfflineModelClient(), message="delete the note Zurich trip")
    card = ActionCard.objects.get(thread_id=turn.thread_id)
    body = owner.client.get(conversation_url(turn.thread_id)).json()
    [shown] = body["cards"]
    assert shown["id"] == str(card.id) and shown["hash"] == card.snapshot_hash and shown["status"] == "pending"
    assert shown["description"] == "Delete the note “Zurich trip”" and shown["trifectaWarning"] is False
    # The card points at the tool call that proposed it, in the same conversation.
    call_ids = [c["id"] for m in body["messages"] for c in m["toolCalls"] if c["name"] == "delete_note"]
    assert call_ids == [shown["toolCallId"]]


def test_a_conversation_shows_only_its_own_cards(owner, notes):
    mine = delete_card(owner, notes["zurich"])
    delete_card(owner, notes["budget"])  # another conversation of the same person
    body = owner.client.get(conversation_url(mine.thread_id)).json()
    assert [c["id"] for c in body["cards"]] == [str(mine.id)]


def test_cards_sent_back_by_an_offline_client_are_ignored(owner, notes):
    card = delete_card(owner, notes["zurich"])
    body = stored_conversation(card.thread_id)
    body["cards"] = [{"id": str(card.id), "status": "confirmed"}]
    response = owner.client.put(conversation_url(card.thread_id), body, format="json")
    assert response.status_code == 200 and response.json()["applied"] is True
    assert response.json()["conversation"]["cards"][0]["status"] == "pending"
    assert ActionCard.objects.get(id=card.id).status == "pending"


def test_the_offline_demo_deletes_a_note_once_the_person_confirms_its_card(owner, notes):
    turn = play(owner, OfflineModelClient(), message="delete the note Zurich trip")
    card = ActionCard.objects.get(thread_id=turn.thread_id)
    assert card.status == "pending" and Note.objects.filter(id=notes["zurich"].id).exists()
    response = post_confirm(owner.client, card)
    assert response.status_code == 200 and response.json()["status"] == "confirmed"
    assert not Note.objects.filter(id=notes["zurich"].id).exists()
    assert Note.objects.filter(id=notes["budget"].id).exists()


# --- Admin (read-only) ----------------------------------------------------------------


def test_staff_find_a_card_by_its_id_or_its_conversation_and_cannot_change_it(owner, notes, admin_client):
    card = delete_card(owner, notes["zurich"])
    other = delete_card(owner, notes["budget"])
    changelist = "/admin/assistant/actioncard/"
    for term in (str(card.id), str(card.thread_id)):
        page = admin_client.get(changelist, {"q": term}).content.decode()
        assert str(card.id) in page and str(other.id) not in page
    assert admin_client.get(changelist, {"q": "delete_note", "status__exact": "pending"}).status_code == 200
    assert admin_client.get(f"{changelist}{card.id}/change/").status_code == 200
    assert admin_client.get(f"{changelist}add/").status_code == 403
    admin_client.post(f"{changelist}{card.id}/change/", {"status": "confirmed"})
    assert ActionCard.objects.get(id=card.id).status == "pending"

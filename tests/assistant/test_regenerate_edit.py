"""Regenerate the last reply and edit the last message: a new turn through the
normal submission; the replaced messages stay as previous versions
(`supersededAt`), never sent to the model again."""

import pytest

from assistant import progress
from assistant.app_events import OPENING_TAG
from assistant.card_events import WITHDRAWN_ERROR
from assistant.history import load_history
from assistant.loop import run_turn
from assistant.models import ActionCard, Turn
from assistant.progress import Cursor
from conversations.models import Message, Thread
from credits.models import CreditAccount
from tests.assistant.conftest import Clock, play
from tests.assistant.test_cards import confirm, delete_card
from tests.conversations.factories import make_thread
from tests.fakes.scripted import ScriptedClient, call, say
from workspace.models import Note


def regenerate(person, thread_id):
    return person.client.post(f"/api/conversations/{thread_id}/regenerate", format="json")


def edit(person, thread_id, message="Changed question"):
    return person.client.post(f"/api/conversations/{thread_id}/edit", {"message": message}, format="json")


@pytest.fixture
def answered(owner):
    return play(owner, ScriptedClient(say("First answer.")), message="First question")


def stored(person, thread_id):
    return person.client.get(f"/api/conversations/{thread_id}").json()["messages"]


def test_regenerate_answers_the_same_message_again_without_the_old_reply(owner, answered, acme):
    response = regenerate(owner, answered.thread_id)
    assert response.status_code == 202, response.content
    body = response.json()
    turn = Turn.objects.get(id=body["turnId"])
    assert turn.status == Turn.Status.QUEUED and turn.user_message_id == answered.user_message_id
    assert turn.enqueue_attempts == 1  # its publish counted: the sweeper requeues it once, as a submission's
    assert CreditAccount.objects.get(organization=acme).reserved_micros == turn.reserved_micros > 0
    client = ScriptedClient(say("Second answer."))
    Turn.objects.filter(id=turn.id).update(model_option=answered.model_option)
    run_turn(turn.id, client=client, clock=Clock())
    assert [type(item).__name__ for item in client.requests[0].history] == ["UserText"]  # old reply not sent
    messages = stored(owner, answered.thread_id)
    assert [(m["role"], m["content"], m["supersededAt"] is not None) for m in messages] == [
        ("user", "First question", False), ("assistant", "First answer.", True), ("assistant", "Second answer.", False),
    ]
    assert body["messageId"] == messages[0]["id"]


def test_edit_resends_a_new_version_of_the_last_message(owner, answered):
    response = edit(owner, answered.thread_id)
    assert response.status_code == 202, response.content
    turn = Turn.objects.get(id=response.json()["turnId"])
    messages = stored(owner, answered.thread_id)
    assert [(m["role"], m["content"], m["supersededAt"] is not None) for m in messages] == [
        ("user", "First question", True), ("assistant", "First answer.", True), ("user", "Changed question", False),
    ]
    assert messages[2]["replaces"] == messages[0]["id"] and messages[2]["id"] == response.json()["messageId"]
    assert [item.text for item in load_history(turn.thread_id)] == ["Changed question"]
    assert Thread.objects.get(id=answered.thread_id).status == Thread.Status.RESPONDING


def test_an_edit_of_the_first_message_retitles_a_title_derived_from_it_not_a_chosen_one(owner, answered):
    """Issue 34.5: the title follows an edit of the first message (its words, not its Markdown)."""
    assert Thread.objects.get(id=answered.thread_id).title == "First question"
    assert edit(owner, answered.thread_id, message="**Better** question").status_code == 202
    assert Thread.objects.get(id=answered.thread_id).title == "Better question"
    Thread.objects.filter(id=answered.thread_id).update(title="My own name", status=Thread.Status.IDLE)
    Turn.objects.filter(thread_id=answered.thread_id).update(status=Turn.Status.DONE)
    assert edit(owner, answered.thread_id, message="Third question").status_code == 202
    assert Thread.objects.get(id=answered.thread_id).title == "My own name"


@pytest.mark.parametrize("action", [regenerate, edit])
@pytest.mark.parametrize("who", ["colleague", "outsider"])
def test_others_get_404_and_nothing_changes(owner, colleague, outsider, answered, action, who):
    response = action({"colleague": colleague, "outsider": outsider}[who], answered.thread_id)
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    assert not Message.objects.filter(superseded_at__isnull=False).exists()
    assert Turn.objects.count() == 1


@pytest.mark.parametrize("action", ["regenerate", "edit"])
def test_anonymous_gets_401(anonymous, answered, action):
    assert anonymous.post(f"/api/conversations/{answered.thread_id}/{action}").status_code == 401


@pytest.mark.parametrize("action", [regenerate, edit])
def test_a_busy_conversation_is_a_409(owner, answered, action):
    assert regenerate(owner, answered.thread_id).status_code == 202
    response = action(owner, answered.thread_id)
    assert response.status_code == 409 and response.json()["code"] == "conversation_busy"
    assert Turn.objects.count() == 2


@pytest.mark.parametrize("action", [regenerate, edit])
def test_a_conversation_without_a_message_of_the_person_is_a_409(owner, action):
    thread = make_thread(owner)
    response = action(owner, thread.id)
    assert response.status_code == 409 and response.json()["code"] == "nothing_to_redo"
    assert not Turn.objects.exists()


@pytest.mark.parametrize("body", [{"message": "   "}, {}, {"message": 3}, {"message": "x", "extra": 1}])
def test_a_bad_edit_is_a_400_that_writes_nothing(owner, answered, body):
    response = owner.client.post(f"/api/conversations/{answered.thread_id}/edit", body, format="json")
    assert response.status_code == 400
    assert not Message.objects.filter(superseded_at__isnull=False).exists()


def test_a_malformed_id_is_a_400(owner):
    response = owner.client.post("/api/conversations/nope/regenerate")
    assert response.status_code == 400 and response.json()["code"] == "invalid_id"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("action", [regenerate, edit])
def test_a_broker_that_is_down_undoes_it_whole(owner, monkeypatch, action):
    from assistant import chat

    monkeypatch.setattr(chat, "enqueue_turn", lambda turn_id: None)
    answered = play(owner, ScriptedClient(say("First answer.")), message="First question")

    def down(turn_id):
        raise ConnectionRefusedError("broker down")

    monkeypatch.setattr(chat, "enqueue_turn", down)
    response = action(owner, answered.thread_id)
    assert response.status_code == 503 and response.json()["code"] == "queue_unavailable"
    assert Message.objects.count() == 2
    assert CreditAccount.objects.get(organization=owner.organization).reserved_micros == 0
    assert not Message.objects.filter(superseded_at__isnull=False).exists()
    assert Turn.objects.count() == 1 and Thread.objects.get().status == Thread.Status.IDLE


# --- Cards: told to a regenerated or edited turn, proposed by one, left to decide -------


def answer_with(owner, response, client):
    turn_id = response.json()["turnId"]
    Turn.objects.filter(id=turn_id).update(model_option="offline")
    run_turn(turn_id, client=client, clock=Clock())
    return turn_id


def blocks_sent(request) -> list[str]:
    return [item.text for item in request.history if item.text.startswith(OPENING_TAG)]


@pytest.mark.parametrize("action", [regenerate, edit])
def test_a_card_decided_before_a_redo_is_told_to_the_new_turn_once(owner, answered, notes, action):
    card = delete_card(owner, notes["zurich"], thread=Thread.objects.get(id=answered.thread_id))
    confirm(owner, card)
    client = ScriptedClient(say("Noted."))
    answer_with(owner, action(owner, answered.thread_id), client)
    [block] = blocks_sent(client.requests[0])
    assert str(card.id) in block and '"kind": "confirmed"' in block
    last_two = [item.text for item in client.requests[0].history[-2:]]
    # An edit: told before the new message; a regenerate: after the message answered again.
    assert last_two == ([block, "Changed question"] if action is edit else ["First question", block])
    # Told once, and never a previous version: a second regenerate still sends it, and no new block.
    again = ScriptedClient(say("Noted again."))
    answer_with(owner, regenerate(owner, answered.thread_id), again)
    assert blocks_sent(again.requests[0]) == [block]
    assert Message.objects.filter(role=Message.Role.EVENT, superseded_at__isnull=True).count() == 1


def test_a_regenerated_turn_proposes_its_card_on_the_stream_like_any_turn(owner, notes):
    first = play(owner, ScriptedClient(call(("delete_note", {"note_id": notes["zurich"].id})), say("Proposed.")),
                 message="Delete Zurich")
    old_card = ActionCard.objects.get(turn_id=first.id)
    client = ScriptedClient(call(("delete_note", {"note_id": notes["zurich"].id})), say("Proposed again."))
    turn_id = answer_with(owner, regenerate(owner, first.thread_id), client)
    new_card = ActionCard.objects.get(turn_id=turn_id)
    events, ended = progress.turn_events(turn_id, Cursor())
    proposed = [event.data for event in events if event.name == "card_proposed"]
    assert ended and [card["id"] for card in proposed] == [str(new_card.id)]
    assert proposed[0]["status"] == "pending" and proposed[0]["toolCallId"]
    # The superseded reply's card is withdrawn: the new version proposes again,
    # and two pending cards for one action could do it twice. It is not told to
    # the model (its proposal is no longer in the history).
    old_card.refresh_from_db()
    assert (old_card.status, old_card.error) == (ActionCard.Status.CANCELLED, WITHDRAWN_ERROR)
    assert old_card.event_delivered_at is not None
    late = owner.client.post(f"/api/cards/{old_card.id}/confirm", {"hash": old_card.snapshot_hash}, format="json")
    assert late.status_code == 409 and late.json()["code"] == "decided"
    assert Note.objects.filter(id=notes["zurich"].id).exists()
    response = owner.client.post(f"/api/cards/{new_card.id}/confirm", {"hash": new_card.snapshot_hash}, format="json")
    assert response.status_code == 200 and response.json()["status"] == "confirmed"
    assert not Note.objects.filter(id=notes["zurich"].id).exists()


def test_a_card_confirmed_before_the_regenerate_stays_confirmed_and_is_told(owner, notes):
    first = play(owner, ScriptedClient(call(("delete_note", {"note_id": notes["zurich"].id})), say("Proposed.")),
                 message="Delete Zurich")
    card = ActionCard.objects.get(turn_id=first.id)
    confirmed = owner.client.post(f"/api/cards/{card.id}/confirm", {"hash": card.snapshot_hash}, format="json")
    assert confirmed.status_code == 200
    client = ScriptedClient(say("Done already."))
    answer_with(owner, regenerate(owner, first.thread_id), client)
    card.refresh_from_db()
    assert card.status == ActionCard.Status.CONFIRMED and card.error == ""
    [block] = blocks_sent(client.requests[0])
    assert str(card.id) in block and '"kind": "confirmed"' in block


@pytest.mark.django_db(transaction=True)
def test_an_undone_regenerate_gives_the_withdrawn_card_back(owner, notes, monkeypatch):
    monkeypatch.setattr("assistant.chat.enqueue_turn", lambda turn_id: None)
    first = play(owner, ScriptedClient(call(("delete_note", {"note_id": notes["zurich"].id})), say("Proposed.")),
                 message="Delete Zurich")
    card = ActionCard.objects.get(turn_id=first.id)

    def broker_down(turn_id):
        raise OSError("broker down")

    monkeypatch.setattr("assistant.chat.enqueue_turn", broker_down)
    response = owner.client.post(f"/api/conversations/{first.thread_id}/regenerate", format="json")
    assert response.status_code == 503 and response.json()["code"] == "queue_unavailable"
    card.refresh_from_db()
    assert (card.status, card.error, card.decided_at, card.event_delivered_at) == (
        ActionCard.Status.PENDING, "", None, None)
    assert not Message.objects.filter(thread_id=first.thread_id, superseded_at__isnull=False).exists()

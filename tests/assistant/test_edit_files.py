"""Editing a message that carried files: the edited message keeps them (copies
attached to it, so the previous version still shows the ones it was sent
with), the new turn's model gets them, and nobody else's files come along; an
edit naming the files it keeps (`attachments`) drops the others, and names
only files of the message it replaces."""

import uuid

import pytest

from assistant.loop import run_turn
from assistant.models import Turn
from conversations.models import Attachment, Message, Thread
from credits.models import CreditAccount
from tests.assistant.conftest import Clock
from tests.assistant.test_chat_files import chat, upload
from tests.assistant.test_regenerate_edit import edit, stored
from tests.fakes.files import png
from tests.fakes.scripted import ScriptedClient, say


@pytest.fixture(autouse=True)
def no_broker(monkeypatch):
    monkeypatch.setattr("assistant.chat.enqueue_turn", lambda turn_id: None)


def answered_with_files(person, ids):
    response = chat(person, ids, message="What does it say?")
    assert response.status_code == 202, response.content
    run_turn(response.json()["turnId"], client=ScriptedClient(say("It says 42 francs.")), clock=Clock())
    return response.json()["conversationId"]


def test_an_edited_message_keeps_the_files_of_the_one_it_replaces(owner):
    ids = [upload(owner), upload(owner, png(), "photo.png")]
    conversation = answered_with_files(owner, ids)

    response = edit(owner, conversation, "And in euros?")
    assert response.status_code == 202, response.content

    old, new = [m for m in stored(owner, conversation) if m["role"] == "user"]
    assert old["supersededAt"] and new["content"] == "And in euros?"
    assert [a["id"] for a in old["attachments"]] == ids  # the previous version as it was sent
    kept = new["attachments"]
    assert [(a["name"], a["type"], a["size"]) for a in kept] == [(a["name"], a["type"], a["size"])
                                                                 for a in old["attachments"]]
    assert not {a["id"] for a in kept} & set(ids)  # its own copies: each version keeps its files
    for file in kept:
        assert owner.client.get(f"/api/files/{file['id']}").json()["attached"] is True

    client = ScriptedClient(say("About 45 euros."))
    run_turn(response.json()["turnId"], client=client, clock=Clock())
    [message] = client.requests[0].history
    assert message.text == "And in euros?"
    assert [(f.name, f.text) for f in message.files] == [("budget.txt", "Budget: 42 francs"), ("photo.png", "")]
    assert message.files[1].data == png()


def test_an_edit_without_files_adds_none_and_leaves_other_files_alone(owner, colleague):
    response = chat(owner, [], message="Hello")
    run_turn(response.json()["turnId"], client=ScriptedClient(say("Hi.")), clock=Clock())
    theirs = upload(colleague)
    mine_unattached = upload(owner)
    assert edit(owner, response.json()["conversationId"], "Hello again").status_code == 202
    assert not Attachment.objects.filter(message__isnull=False).exists()
    assert set(Attachment.objects.values_list("id", flat=True)) == {
        Attachment.objects.get(id=theirs).id, Attachment.objects.get(id=mine_unattached).id}


def test_a_colleagues_edit_is_404_and_copies_nothing(owner, colleague):
    conversation = answered_with_files(owner, [upload(owner)])
    response = edit(colleague, conversation, "Mine now")
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    assert Attachment.objects.count() == 1 and Turn.objects.count() == 1
    assert Thread.objects.get(id=conversation).status == Thread.Status.IDLE


# --- An edit that drops files: `attachments` names the ones it keeps ----------------------------


def edit_keeping(person, conversation, attachments, message="Only the photo"):
    return person.client.post(f"/api/conversations/{conversation}/edit",
                              {"message": message, "attachments": attachments}, format="json")


def written(conversation):
    """What an edit changes: messages, versions, turns, files, the thread, the held credits."""
    return (Message.objects.count(), Message.objects.filter(superseded_at__isnull=False).count(),
            Turn.objects.count(), Attachment.objects.count(), Thread.objects.get(id=conversation).status,
            CreditAccount.objects.get().reserved_micros)


def test_an_edit_keeps_only_the_files_it_names_and_the_model_gets_only_those(owner):
    ids = [upload(owner), upload(owner, png(), "photo.png")]
    conversation = answered_with_files(owner, ids)

    response = edit_keeping(owner, conversation, [ids[1]])
    assert response.status_code == 202, response.content

    old, new = [m for m in stored(owner, conversation) if m["role"] == "user"]
    assert [a["id"] for a in old["attachments"]] == ids  # the previous version keeps both
    assert [a["name"] for a in new["attachments"]] == ["photo.png"] and new["attachments"][0]["id"] != ids[1]
    client = ScriptedClient(say("A photo."))
    run_turn(response.json()["turnId"], client=client, clock=Clock())
    [message] = client.requests[0].history
    assert [(f.name, f.data) for f in message.files] == [("photo.png", png())]


def test_an_edit_that_keeps_no_file(owner):
    conversation = answered_with_files(owner, [upload(owner)])
    response = edit_keeping(owner, conversation, [], message="No file now")
    assert response.status_code == 202, response.content
    new = stored(owner, conversation)[-1]
    assert new["content"] == "No file now" and "attachments" not in new
    client = ScriptedClient(say("Fine."))
    run_turn(response.json()["turnId"], client=client, clock=Clock())
    assert client.requests[0].history[0].files == ()


def test_files_of_a_previous_version_or_another_message_are_refused(owner):
    other = answered_with_files(owner, [upload(owner, name="other.txt")])
    conversation = answered_with_files(owner, [upload(owner)])
    first_version = stored(owner, conversation)[0]["attachments"][0]["id"]
    assert edit(owner, conversation, "Edited once").status_code == 202
    [turn] = Turn.objects.filter(thread_id=conversation, status=Turn.Status.QUEUED)
    run_turn(turn.id, client=ScriptedClient(say("Again.")), clock=Clock())
    mine_elsewhere = [upload(owner), stored(owner, other)[0]["attachments"][0]["id"], first_version]
    before = written(conversation)
    for file_id in mine_elsewhere:
        response = edit_keeping(owner, conversation, [file_id])
        assert response.status_code == 400, response.content
        assert response.json()["code"] == "file_not_in_message" and "attachments" in response.json()["fields"]
        assert written(conversation) == before


@pytest.mark.parametrize(("attachments", "status", "code"), [
    ("theirs", 404, "not_found"), ("unknown", 404, "not_found"), ("twice", 400, "invalid"),
    ("not an id", 400, "invalid"), ("six", 400, "too_many_files"),
])
def test_a_file_that_is_not_the_persons_or_a_bad_list_is_refused_and_nothing_is_written(
        owner, colleague, attachments, status, code):
    kept = upload(owner)
    conversation = answered_with_files(owner, [kept])
    attachments = {"theirs": [kept, upload(colleague)], "unknown": [str(uuid.uuid4())], "twice": [kept, kept],
                   "not an id": ["nope"], "six": [kept] + [str(uuid.uuid4()) for _ in range(5)]}[attachments]
    before = written(conversation)
    response = edit_keeping(owner, conversation, attachments)
    assert response.status_code == status and response.json()["code"] == code, response.content
    assert written(conversation) == before


@pytest.mark.parametrize("who", ["colleague", "outsider"])
def test_others_editing_with_the_files_ids_get_404_and_nothing_is_written(owner, colleague, outsider, who):
    kept = upload(owner)
    conversation = answered_with_files(owner, [kept])
    before = written(conversation)
    response = edit_keeping({"colleague": colleague, "outsider": outsider}[who], conversation, [kept])
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    assert written(conversation) == before


def test_anonymous_editing_with_files_gets_401(owner, anonymous):
    kept = upload(owner)
    conversation = answered_with_files(owner, [kept])
    response = anonymous.post(f"/api/conversations/{conversation}/edit",
                              {"message": "x", "attachments": [kept]}, format="json")
    assert response.status_code == 401
    assert Turn.objects.count() == 1

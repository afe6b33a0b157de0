"""Editing a message that carried files: the edited message keeps them (copies
attached to it, so the previous version still shows the ones it was sent
with), the new turn's model gets them, and nobody else's files come along."""

import pytest

from assistant.loop import run_turn
from assistant.models import Turn
from conversations.models import Attachment, Thread
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

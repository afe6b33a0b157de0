"""A message id is unique within its conversation, not across the product:
clients choose their ids, and two people (or two conversations) may pick the
same one without learning anything about each other."""

import uuid

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from conversations.models import Message
from tests.conversations.factories import BASE_TIME, make_thread, stored_conversation
from tests.conversations.test_api import detail_url


def contents(person, conversation_id) -> list[str]:
    response = person.client.get(detail_url(conversation_id))
    assert response.status_code == 200
    return [(m["id"], m["content"]) for m in response.json()["messages"]]


def with_ids(message_ids, marker: str) -> dict:
    body = stored_conversation()
    for message, message_id in zip(body["messages"], message_ids, strict=True):
        message["id"] = message_id
        message["content"] = f"{marker}: {message['content']}"
    return body


def test_the_same_message_ids_are_stored_for_each_person_that_picks_them(owner, colleague, outsider):
    shared_ids = [str(uuid.uuid4()), str(uuid.uuid4())]
    bodies = []
    for person in (owner, colleague, outsider):
        body = with_ids(shared_ids, person.user.username)
        response = person.client.put(detail_url(body["id"]), body, format="json")
        assert response.status_code == 200, response.json()
        bodies.append((person, body))
    for person, body in bodies:
        assert contents(person, body["id"]) == [(m["id"], m["content"]) for m in body["messages"]]
    assert Message.objects.filter(client_id=shared_ids[0]).count() == 3


def test_one_person_may_reuse_message_ids_in_two_conversations(owner):
    shared_ids = [str(uuid.uuid4()), str(uuid.uuid4())]
    first, second = with_ids(shared_ids, "first"), with_ids(shared_ids, "second")
    for body in (first, second):
        assert owner.client.put(detail_url(body["id"]), body, format="json").status_code == 200
    # Re-uploading the first changes nothing in the second.
    first["updatedAt"] = "2026-11-20T10:00:00Z"
    first["messages"][0]["content"] = "edited"
    assert owner.client.put(detail_url(first["id"]), first, format="json").status_code == 200
    assert contents(owner, second["id"])[0][1] == "second: Find my notes about Zurich"
    assert contents(owner, first["id"])[0][1] == "edited"


def test_an_id_stays_unique_within_its_conversation(owner):
    thread = make_thread(owner, messages=1)
    taken = thread.messages.get().client_id
    with pytest.raises(IntegrityError), transaction.atomic():
        Message.objects.create(thread=thread, seq=1, role="user", content="again", client_id=taken,
                               created_at=BASE_TIME)


def test_a_message_the_application_writes_is_known_by_its_primary_key(owner):
    message = make_thread(owner, messages=1).messages.get()
    assert message.client_id == message.id


BEFORE = [("conversations", "0002_message_notice_message_turn_id_toolcall_finished_at")]


@pytest.mark.django_db(transaction=True)
def test_the_migration_keeps_every_existing_message_id(acme, django_user_model):
    """Existing messages keep the id the API showed; tool calls stay linked."""
    user = django_user_model.objects.create_user(username="migrated")
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    thread = old.get_model("conversations", "Thread").objects.create(
        organization_id=acme.id, user_id=user.id, created_at=BASE_TIME, updated_at=BASE_TIME,
        last_activity_at=BASE_TIME,
    )
    old_message = old.get_model("conversations", "Message")
    ids = [old_message.objects.create(thread=thread, seq=seq, role="user", content="hi", created_at=BASE_TIME).id
           for seq in range(3)]
    old.get_model("conversations", "ToolCall").objects.create(
        message_id=ids[0], tool_use_id="t", name="n", created_at=BASE_TIME,
    )

    # Forward to every app's latest migration, so later tests find the schema whole.
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    migrated = Message.objects.filter(thread_id=thread.id).order_by("seq")
    assert [(m.id, m.client_id) for m in migrated] == [(i, i) for i in ids]
    assert migrated[0].tool_calls.count() == 1

"""The esm-ai-memory contract at /ai/conversations, driven as the seed's backend adapter does.

The seed (shared/seeds/esm-ai-memory.txt): list → ConversationSummary[] (a bare
array), get → StoredConversation, PUT = full upsert with the document as body,
DELETE → 204, the user implicit; at login the client hydrates by last write
wins on updatedAt, later it uploads what changed locally. The client's ids are
its own strings, its dates ISO or epoch milliseconds, and fields the server
does not know come back as sent.
"""

import json
from datetime import timedelta

import pytest
from django.test import Client

from assistant_engine.surfaces.ai_memory.ids import message_uuid
from conversations.models import Message, Thread
from tests.conversations.factories import BASE_TIME, iso, make_thread
from tests.streamed import streamed_json

EPOCH_MS = int(BASE_TIME.timestamp() * 1000)


def url(conversation_id=None) -> str:
    return "/ai/conversations" + (f"/{conversation_id}" if conversation_id else "")


def client_document(conversation_id="conv:2026-11.a_1", *, updated_ms=EPOCH_MS + 60_000, text="Zurich notes?"):
    """What the esm-ai-memory client stores locally: its own ids, epoch dates,
    and fields of its own at every level, in its own key order."""
    return {
        "id": conversation_id,
        "userId": "egen-user-42",
        "updatedAt": updated_ms,
        "createdAt": EPOCH_MS,
        "title": None,
        "widget": {"panel": "right", "z": [1, 2.5, None, True]},
        "messages": [
            {
                "role": "user",
                "id": "msg-1",
                "createdAt": EPOCH_MS,
                "content": text,
                "pending": False,
                "localOnly": {"draft": "", "émoji": "🙂"},
            },
            {
                "id": "msg-2",
                "role": "assistant",
                "content": "Let me look.",
                "createdAt": iso(BASE_TIME + timedelta(seconds=5)),
                "toolCalls": [
                    {
                        "name": "search_notes",
                        "id": "toolu_01",
                        "input": {"query": "Zurich", "limit": 5, "a": 1},
                        "result": {"notes": [{"title": "Trip", "z": 1.0}], "b": 2},
                        "durationMs": 412,
                    }
                ],
                "model": "claude-x",
            },
        ],
    }


class BackendAdapter:
    """The seed's backend-adapter.ts in Python: any non-ok answer is 'nothing to do'."""

    def __init__(self, http):
        self.http = http

    def list_conversations(self) -> list[dict] | None:
        response = self.http.get(url())
        return response.json() if response.status_code == 200 else None

    def get_conversation(self, conversation_id) -> dict | None:
        response = self.http.get(url(conversation_id))
        return response.json() if response.status_code == 200 else None

    def save_conversation(self, document) -> bool:
        return self.http.put(url(document["id"]), document, format="json").status_code == 200

    def delete_conversation(self, conversation_id) -> bool:
        return self.http.delete(url(conversation_id)).status_code == 204


def hydrate(adapter: BackendAdapter, local: dict[str, dict]) -> None:
    """hydrateFromBackend(): fetch what the backend has newer, by updatedAt."""
    for summary in adapter.list_conversations() or []:
        mine = local.get(summary["id"])
        if mine is None or summary["updatedAt"] > mine["updatedAt"]:
            local[summary["id"]] = adapter.get_conversation(summary["id"])


def client_fields(sent: dict, got: dict) -> str:
    """The bytes of the client's own fields in what came back, in the client's key order."""
    def pick(sent_value, got_value):
        if isinstance(sent_value, dict):
            return {key: pick(value, got_value[key]) for key, value in sent_value.items()}
        if isinstance(sent_value, list) and sent_value and isinstance(sent_value[0], dict):
            return [pick(a, b) for a, b in zip(sent_value, got_value, strict=True)]
        return got_value
    return json.dumps(pick(sent, got), ensure_ascii=False, separators=(",", ":"))


def as_bytes(document: dict) -> str:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def test_the_seed_client_syncs_round_trips_and_deletes(owner):
    adapter = BackendAdapter(owner.client)
    assert adapter.list_conversations() == []

    # Upload after local changes: the document as the client keeps it.
    local = {"conv:2026-11.a_1": client_document()}
    assert adapter.save_conversation(local["conv:2026-11.a_1"])

    # A second device hydrates: the same document, byte for byte on the client's fields.
    other_device: dict[str, dict] = {}
    hydrate(adapter, other_device)
    got = other_device["conv:2026-11.a_1"]
    sent = client_document()
    assert client_fields(sent, got) == as_bytes(sent)
    assert list(got)[: len(sent)] == list(sent)  # the client's keys first, in its order
    assert got["status"] == "idle" and got["messages"][0]["status"] == "complete"  # plus the server's fields

    # The first device edits locally, uploads; the other hydrates the newer version.
    edited = client_document(updated_ms=EPOCH_MS + 120_000, text="Zurich and Geneva notes?")
    edited["messages"][1]["toolCalls"][0]["result"]["b"] = 3
    assert adapter.save_conversation(edited)
    hydrate(adapter, other_device)
    assert client_fields(edited, other_device["conv:2026-11.a_1"]) == as_bytes(edited)

    # A stale device uploads an older version: last write wins, the newer stays.
    assert adapter.save_conversation(client_document(updated_ms=EPOCH_MS + 90_000))
    assert adapter.get_conversation("conv:2026-11.a_1")["messages"][0]["content"] == "Zurich and Geneva notes?"

    # Hydrating when local is already current fetches nothing new and changes nothing.
    before = as_bytes(other_device["conv:2026-11.a_1"])
    hydrate(adapter, other_device)
    assert as_bytes(other_device["conv:2026-11.a_1"]) == before

    assert adapter.delete_conversation("conv:2026-11.a_1")
    assert adapter.list_conversations() == []
    assert adapter.get_conversation("conv:2026-11.a_1") is None
    assert Thread.objects.count() == 0


def test_the_list_is_a_bare_array_newest_first_in_the_clients_date_format(owner):
    browser = make_thread(owner, title="From the browser", updated_at=BASE_TIME)
    owner.client.put(url("older"), client_document("older", updated_ms=EPOCH_MS + 1_000), format="json")
    owner.client.put(url("newer"), client_document("newer", updated_ms=EPOCH_MS + 2_000), format="json")
    body = owner.client.get(url()).json()
    assert [item["id"] for item in body] == ["newer", "older", str(browser.id)]
    assert body[0] == {"id": "newer", "title": None, "createdAt": EPOCH_MS, "updatedAt": EPOCH_MS + 2_000,
                       "status": "idle"}
    assert body[2]["updatedAt"] == iso(BASE_TIME)


def test_the_list_costs_the_same_queries_whatever_the_number(owner, django_assert_num_queries):
    for count in (1, 20):
        Thread.objects.all().delete()
        for index in range(count):
            owner.client.put(url(f"c{index}"), client_document(f"c{index}"), format="json")
        # The token, the membership, then the threads.
        with django_assert_num_queries(3):
            assert len(owner.client.get(url()).json()) == count


def test_the_same_conversation_is_seen_through_api_with_uuids_and_resumes(owner):
    owner.client.put(url("conv-9"), client_document("conv-9"), format="json")
    listed = owner.client.get("/api/conversations").json()["results"]
    assert len(listed) == 1
    thread = Thread.objects.get()
    assert listed[0]["id"] == str(thread.id)
    api_document = owner.client.get(f"/api/conversations/{thread.id}").json()
    assert [message["id"] for message in api_document["messages"]] == [
        str(message.client_id) for message in Message.objects.order_by("seq")
    ]
    assert api_document["messages"][1]["toolCalls"][0]["input"] == {"query": "Zurich", "limit": 5, "a": 1}

    # Opened in the browser, by its UUID.
    browser = Client()
    browser.force_login(owner.user)
    page = browser.get(f"/c/{thread.id}/")
    assert page.status_code == 200 and "Zurich notes?" in page.content.decode()

    # Resumed: the chat takes the conversation by its UUID and appends a turn.
    response = owner.client.post("/api/chat", {"message": "And Bern?", "conversationId": str(thread.id)},
                                 format="json")
    assert response.status_code == 202, response.json()
    got = owner.client.get(url("conv-9")).json()
    assert [message["id"] for message in got["messages"][:2]] == ["msg-1", "msg-2"]
    assert got["messages"][2]["content"] == "And Bern?"
    assert got["messages"][2]["id"] == response.json()["messageId"]
    # The turn moved the conversation on: its updatedAt is the server's, in the client's format.
    thread.refresh_from_db()
    assert got["updatedAt"] == int(thread.updated_at.timestamp() * 1000) > EPOCH_MS + 60_000
    assert got["widget"] == client_document()["widget"]


def test_an_api_upload_of_the_same_conversation_replaces_the_clients_document(owner):
    owner.client.put(url("conv-9"), client_document("conv-9"), format="json")
    thread = Thread.objects.get()
    document = owner.client.get(f"/api/conversations/{thread.id}").json()
    document["updatedAt"] = iso(BASE_TIME + timedelta(hours=2))
    document["messages"] = document["messages"][:1]
    for key in ("userId", "status", "cards"):
        document.pop(key)
    for message in document["messages"]:
        message.pop("status"), message.pop("notice")
    assert owner.client.put(f"/api/conversations/{thread.id}", document, format="json").json()["applied"]
    got = owner.client.get(url("conv-9")).json()
    assert "widget" not in got and got["updatedAt"] == iso(BASE_TIME + timedelta(hours=2))
    assert got["messages"][0]["id"] == "msg-1" and "pending" not in got["messages"][0]


def test_two_people_may_choose_the_same_ids(owner, colleague):
    for person in (owner, colleague):
        assert person.client.put(url("chat-1"), client_document("chat-1"), format="json").status_code == 200
    assert Thread.objects.count() == 2
    assert {thread.user_id for thread in Thread.objects.all()} == {owner.user.id, colleague.user.id}


@pytest.mark.parametrize("who", ["colleague", "outsider"])
def test_another_persons_conversation_is_not_found(owner, colleague, outsider, who):
    person = {"colleague": colleague, "outsider": outsider}[who]
    owner.client.put(url("conv-9"), client_document("conv-9"), format="json")
    thread = Thread.objects.get()
    assert person.client.get(url()).json() == []
    for conversation_id in ("conv-9", str(thread.id)):
        assert person.client.get(url(conversation_id)).status_code == 404
        assert person.client.delete(url(conversation_id)).status_code == 404
    # The owner's key, chosen as an id, is a new conversation of their own: nothing of the owner's changes.
    taken = client_document(str(thread.id), text="Mine now?")
    response = person.client.put(url(str(thread.id)), taken, format="json")
    assert response.status_code == 200 and response.json()["id"] == str(thread.id)
    assert Thread.objects.get(id=thread.id).user_id == owner.user.id
    assert owner.client.get(url("conv-9")).json()["messages"][0]["content"] == "Zurich notes?"
    assert person.client.get(url(str(thread.id))).json()["messages"][0]["content"] == "Mine now?"


def test_the_storage_key_is_the_servers_own_and_random(owner):
    """Once a uuid5 of a public namespace and the person's ids: anyone could compute it."""
    for client_id in ("chat-1", "3f2b8c1e-9a4d-4e6b-8f0a-1c2d3e4f5a6b"):
        owner.client.put(url(client_id), client_document(client_id), format="json")
        thread = Thread.objects.get(external_id=client_id)
        assert thread.id.version == 4 and str(thread.id) != client_id
        assert owner.client.get(url(client_id)).json()["id"] == client_id


@pytest.mark.parametrize("who", ["colleague", "outsider"])
def test_no_one_can_occupy_or_probe_another_persons_id(owner, colleague, outsider, who):
    """Another person writes first the key the owner's id used to map to, then
    the owner's id itself: the owner writes and reads their `chat-1` as before,
    and every answer the other person gets is the one a fresh id gets."""
    import uuid
    person = {"colleague": colleague, "outsider": outsider}[who]
    old_key = uuid.uuid5(uuid.UUID("6f1b1c55-8a7e-4c53-9a8e-3d7b2c1e0a41"),
                         f"conversation:{owner.member.organization_id}:{owner.user.id}:chat-1")
    squat = person.client.put(url(str(old_key)), client_document(str(old_key), text="Squatted"), format="json")
    assert squat.status_code == 200
    assert owner.client.put(url("chat-1"), client_document("chat-1"), format="json").status_code == 200
    assert owner.client.get(url("chat-1")).json()["messages"][0]["content"] == "Zurich notes?"
    # Probing: the owner's id answers exactly as an id no one uses.
    for client_id in ("chat-1", "never-used"):
        assert person.client.get(url(client_id)).status_code == 404
        assert person.client.delete(url(client_id)).status_code == 404
    assert person.client.put(url("chat-1"), client_document("chat-1", text="Theirs"), format="json").status_code == 200
    assert owner.client.get(url("chat-1")).json()["messages"][0]["content"] == "Zurich notes?"
    assert person.client.get(url("chat-1")).json()["messages"][0]["content"] == "Theirs"


def test_anonymous_gets_401_everywhere(anonymous, owner):
    owner.client.put(url("conv-9"), client_document("conv-9"), format="json")
    for response in (anonymous.get(url()), anonymous.get(url("conv-9")), anonymous.delete(url("conv-9")),
                     anonymous.put(url("conv-9"), client_document("conv-9"), format="json")):
        assert response.status_code == 401
        assert response.json()["code"] == "not_authenticated"
    assert Thread.objects.count() == 1


def test_the_browser_session_works_too(owner):
    from rest_framework.test import APIClient
    browser = APIClient()
    browser.force_login(owner.user)
    owner.client.put(url("conv-9"), client_document("conv-9"), format="json")
    assert [item["id"] for item in browser.get(url()).json()] == ["conv-9"]


@pytest.mark.parametrize(("path_id", "change", "field"), [
    ("bad id", None, None),
    ("x" * 201, None, None),
    ("conv-9", lambda d: d.update(id="other"), "id"),
    ("conv-9", lambda d: d["messages"][0].update(id="no spaces"), "messages.0.id"),
    ("conv-9", lambda d: d["messages"][1].update(id="msg-1"), "messages"),
    ("conv-9", lambda d: d["messages"][1].update(id=str(message_uuid("msg-1"))), "messages"),
    ("conv-9", lambda d: d.update(createdAt=True), "createdAt"),
    ("conv-9", lambda d: d.update(createdAt=-1), "createdAt"),
    ("conv-9", lambda d: d.update(updatedAt="yesterday"), "updatedAt"),
    ("conv-9", lambda d: d.update(updatedAt=253402300800000), "updatedAt"),  # past 9999 (a year ahead is fine)
    ("conv-9", lambda d: d.update(createdAt=EPOCH_MS + 70_000), "createdAt"),
    ("conv-9", lambda d: d["messages"][0].update(role="robot"), "messages.0.role"),
    ("conv-9", lambda d: d["messages"][0].update(content=5), "messages.0.content"),
    ("conv-9", lambda d: d["widget"].update(bad="a\x00b"), None),
])
def test_bad_documents_are_refused_and_nothing_is_written(owner, path_id, change, field):
    document = client_document("conv-9")
    if change:
        change(document)
    response = owner.client.put(url(path_id), document, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] in ("invalid", "invalid_id", "id_mismatch")
    if field:
        assert field in body["fields"]
    assert Thread.objects.count() == 0


def test_a_conversation_too_large_is_413_and_nothing_is_written(owner, settings):
    settings.CONVERSATION_MAX_BYTES = 500
    document = client_document("conv-9")
    document["widget"]["blob"] = "x" * 600  # the client's own fields count: they are stored too
    response = owner.client.put(url("conv-9"), document, format="json")
    assert response.status_code == 413 and response.json()["code"] == "conversation_too_large"
    assert Thread.objects.count() == 0


def test_delete_while_responding_is_409(owner):
    owner.client.put(url("conv-9"), client_document("conv-9"), format="json")
    Thread.objects.update(status=Thread.Status.RESPONDING)
    response = owner.client.delete(url("conv-9"))
    assert response.status_code == 409 and response.json()["code"] == "conversation_busy"
    assert owner.client.put(url("conv-9"), client_document("conv-9", updated_ms=EPOCH_MS + 99_000),
                            format="json").status_code == 409


def test_the_persons_export_carries_the_clients_own_ids_and_fields(owner):
    owner.client.put(url("conv-9"), client_document("conv-9"), format="json")
    exported = streamed_json(owner.client.get("/api/me/export"))["conversations"]
    assert exported[0]["clientId"] == "conv-9"
    assert exported[0]["clientDocument"]["widget"] == client_document()["widget"]
    assert exported[0]["messages"][0]["clientId"] == "msg-1"
    assert exported[0]["messages"][0]["clientDocument"]["localOnly"] == {"draft": "", "émoji": "🙂"}


@pytest.mark.django_db(transaction=True)
def test_the_migration_gives_each_derived_key_a_random_one_and_everything_follows(owner):
    """Conversations stored under the old computable key (a UUIDv5 of a public
    namespace and the person's ids) get a random one; messages, turns and the
    staff access rows follow, and the client still finds its `chat-1`."""
    import uuid

    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before = [("conversations", "0010_message_search_per_thread")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(list(executor.recorder.applied_migrations())).apps  # every app as it is now
    derived = uuid.uuid5(uuid.UUID("6f1b1c55-8a7e-4c53-9a8e-3d7b2c1e0a41"),
                         f"conversation:{owner.organization.id}:{owner.user.id}:chat-1")
    thread = old.get_model("conversations", "Thread").objects.create(
        id=derived, organization_id=owner.organization.id, user_id=owner.user.id, external_id="chat-1",
        title="Old", created_at=BASE_TIME, updated_at=BASE_TIME, last_activity_at=BASE_TIME, next_seq=1)
    old.get_model("conversations", "Message").objects.create(
        thread=thread, seq=0, role="user", content="Kept", created_at=BASE_TIME, client_id=message_uuid("m-1"),
        external_id="m-1")
    turn = old.get_model("assistant", "Turn").objects.create(
        thread_id=derived, organization_id=owner.organization.id, user_id=owner.user.id, status="done")
    old.get_model("assistant_organizations", "StaffAccess").objects.create(
        at=BASE_TIME, staff_username="mo", person_id=owner.user.id, organization_id=owner.organization.id,
        kind="conversation", object_id=str(derived), path="/admin/")
    # A random key already: kept. Made with the models as they were then (a
    # later migration of another app may have added columns since).
    untouched = old.get_model("conversations", "Thread").objects.create(
        id=uuid.uuid4(), organization_id=owner.organization.id, user_id=owner.user.id, title="Browser",
        created_at=BASE_TIME, updated_at=BASE_TIME, last_activity_at=BASE_TIME)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    from assistant.models import Turn
    from assistant_engine.organizations.models import StaffAccess

    assert not Thread.objects.filter(id=derived).exists() and Thread.objects.filter(id=untouched.id).exists()
    rekeyed = Thread.objects.get(external_id="chat-1")
    assert rekeyed.id.version == 4 and rekeyed.messages.get().content == "Kept"
    assert Turn.objects.get(id=turn.id).thread_id == rekeyed.id
    assert StaffAccess.objects.get().object_id == str(rekeyed.id)
    assert owner.client.get(url("chat-1")).json()["messages"][0]["content"] == "Kept"

"""Wherever the API takes a UUID, only a UUID string in its canonical form is
one: a JSON number or boolean (once stored as UUID(int=5) or the nil UUID),
braces, "urn:uuid:" or bare hex are a 400 and nothing is written."""

import uuid

import pytest

from assistant.models import Turn
from conversations.models import Message, Thread
from tests.conversations.factories import stored_conversation
from tests.conversations.test_api import detail_url

A_UUID = "3f2b8c1e-9a4d-4e6b-8f0a-1c2d3e4f5a6b"
NOT_UUIDS = [5, 0, False, True, 1.5, ["a"], {"id": A_UUID}, A_UUID.replace("-", ""), "{" + A_UUID + "}",
             "urn:uuid:" + A_UUID, A_UUID + " ", ""]
NOT_UUID_PATHS = [A_UUID.replace("-", ""), "urn:uuid:" + A_UUID, "5", "%7B" + A_UUID + "%7D"]


@pytest.mark.parametrize("bad", NOT_UUIDS, ids=repr)
def test_a_message_id_that_is_not_a_uuid_string_is_a_400_and_writes_nothing(owner, bad):
    body = stored_conversation()
    body["messages"][0]["id"] = bad
    response = owner.client.put(detail_url(body["id"]), body, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert list(response.json()["fields"]) == ["messages.0.id"]
    assert not Thread.objects.exists() and not Message.objects.exists()


@pytest.mark.parametrize("bad", [5, False, A_UUID.replace("-", "")], ids=repr)
def test_the_bodys_conversation_id_is_read_only_and_ignored(owner, bad):
    """The URL names the conversation; the body's id is sent back as read, and ignored."""
    body = stored_conversation(A_UUID)
    body["id"] = bad
    response = owner.client.put(detail_url(A_UUID), body, format="json")
    assert response.status_code == 200 and response.json()["conversation"]["id"] == A_UUID
    assert [str(thread.id) for thread in Thread.objects.all()] == [A_UUID]


def test_an_uppercase_uuid_is_still_a_uuid(owner):
    body = stored_conversation()
    body["messages"][0]["id"] = body["messages"][0]["id"].upper()
    response = owner.client.put(detail_url(body["id"]), body, format="json")
    assert response.status_code == 200
    assert response.json()["conversation"]["messages"][0]["id"] == body["messages"][0]["id"].lower()


@pytest.mark.parametrize("bad", [5, True, A_UUID.replace("-", ""), "urn:uuid:" + A_UUID], ids=repr)
def test_a_chat_conversation_id_that_is_not_a_uuid_string_is_a_400_and_writes_nothing(owner, bad):
    response = owner.client.post("/api/chat", {"message": "hello", "conversationId": bad}, format="json")
    assert response.status_code == 400
    assert list(response.json()["fields"]) == ["conversationId"]
    assert not Thread.objects.exists() and not Turn.objects.exists()


def test_a_chat_conversation_id_of_5_does_not_reach_a_conversation_stored_as_uuid_int_5(owner):
    # Before, 5 was read as 00000000-0000-0000-0000-000000000005: a conversation
    # with that id was continued.
    body = stored_conversation(uuid.UUID(int=5))
    assert owner.client.put(detail_url(body["id"]), body, format="json").status_code == 200
    response = owner.client.post("/api/chat", {"message": "hello", "conversationId": 5}, format="json")
    assert response.status_code == 400
    assert Message.objects.filter(thread_id=uuid.UUID(int=5)).count() == 2


@pytest.mark.parametrize("bad", NOT_UUID_PATHS)
@pytest.mark.parametrize("url", ["/api/conversations/{}", "/api/turns/{}", "/api/turns/{}/events",
                                 "/api/cards/{}", "/api/cards/{}/cancel"])
def test_a_path_id_that_is_not_a_canonical_uuid_is_a_400_invalid_id(owner, url, bad):
    method = owner.client.post if url.endswith("cancel") else owner.client.get
    response = method(url.format(bad), format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_id"


@pytest.mark.parametrize(("who", "status"), [("owner", 200), ("colleague", 404), ("outsider", 404)])
def test_the_canonical_form_reaches_the_tenancy_check_and_bare_hex_never_does(owner, who, status, request):
    body = stored_conversation()
    assert owner.client.put(detail_url(body["id"]), body, format="json").status_code == 200
    person = request.getfixturevalue(who)
    assert person.client.get(detail_url(body["id"])).status_code == status
    assert person.client.get(detail_url(body["id"].replace("-", ""))).status_code == 400


def test_anonymous_gets_401_whatever_the_id(anonymous, db):
    assert anonymous.get(f"/api/turns/{A_UUID.replace('-', '')}").status_code == 401
    response = anonymous.post("/api/chat", {"message": "hello", "conversationId": 5}, format="json")
    assert response.status_code == 401

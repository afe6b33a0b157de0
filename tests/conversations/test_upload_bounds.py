"""What one conversation may store is bounded (CONVERSATION_MAX_BYTES,
CONVERSATION_MAX_MESSAGES): beyond, a clear refusal and nothing written. The
request-body limit of a conversation upload follows the byte bound."""

import json
import uuid

import pytest

from conversations.models import Message, Thread, ToolCall
from tests.conversations.factories import BASE_TIME, iso, stored_conversation
from tests.conversations.test_api import detail_url


def messages(count: int, content: str = "hello") -> list[dict]:
    return [
        {"id": str(uuid.uuid4()), "role": "user", "content": content, "createdAt": iso(BASE_TIME)}
        for _ in range(count)
    ]


def row_counts() -> tuple[int, int, int]:
    return Thread.objects.count(), Message.objects.count(), ToolCall.objects.count()


@pytest.fixture
def small_bounds(settings):
    settings.CONVERSATION_MAX_MESSAGES = 3
    settings.CONVERSATION_MAX_BYTES = 1100
    return settings


def test_the_maximum_number_of_messages_is_accepted(owner, small_bounds):
    body = stored_conversation(messages=messages(3))
    assert owner.client.put(detail_url(body["id"]), body, format="json").status_code == 200


def test_one_message_more_is_a_400_too_many_messages_and_writes_nothing(owner, small_bounds):
    body = stored_conversation(messages=messages(4))
    response = owner.client.put(detail_url(body["id"]), body, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "too_many_messages"
    assert "messages" in response.json()["fields"]
    assert row_counts() == (0, 0, 0)


def test_growing_a_stored_conversation_past_the_bound_leaves_it_as_it_was(owner, small_bounds):
    body = stored_conversation(messages=messages(3))
    owner.client.put(detail_url(body["id"]), body, format="json")
    grown = {**body, "updatedAt": "2026-11-20T10:00:00Z", "messages": body["messages"] + messages(1)}
    response = owner.client.put(detail_url(body["id"]), grown, format="json")
    assert response.status_code == 400
    assert Thread.objects.get(id=body["id"]).updated_at.isoformat().startswith("2026-11-01T13:00")
    assert Message.objects.count() == 3


def test_a_conversation_storing_more_bytes_than_allowed_is_413_and_writes_nothing(owner, small_bounds):
    body = stored_conversation()  # the tool call's JSON fits, its result below makes it too large
    body["messages"][1]["toolCalls"][0]["result"] = {"text": "x" * 1100}
    response = owner.client.put(detail_url(body["id"]), body, format="json")
    assert response.status_code == 413
    assert response.json()["code"] == "conversation_too_large"
    assert row_counts() == (0, 0, 0)


def test_bytes_are_counted_in_utf8_not_characters(owner, small_bounds):
    body = stored_conversation(messages=messages(1, content="é" * 549))  # 1,098 bytes: fits
    assert owner.client.put(detail_url(body["id"]), body, format="json").status_code == 200
    body = stored_conversation(messages=messages(1, content="é" * 551))  # 551 characters, 1,102 bytes
    response = owner.client.put(detail_url(body["id"]), body, format="json")
    assert response.status_code == 413
    assert response.json()["code"] == "conversation_too_large"


@pytest.mark.parametrize("who", ["colleague", "outsider"])
def test_others_are_refused_the_same_way_and_the_owners_conversation_is_untouched(owner, who, request,
                                                                                   small_bounds):
    body = stored_conversation(messages=messages(2))
    owner.client.put(detail_url(body["id"]), body, format="json")
    taken = {**body, "updatedAt": "2026-11-20T10:00:00Z", "messages": messages(4)}
    response = request.getfixturevalue(who).client.put(detail_url(body["id"]), taken, format="json")
    # The bound is checked before ownership: the answer says nothing of whose id it is.
    assert response.status_code == 400
    assert response.json()["code"] == "too_many_messages"
    assert [str(m.client_id) for m in Message.objects.order_by("seq")] == [m["id"] for m in body["messages"]]
    fits = {**taken, "messages": messages(1)}
    # Within the bounds: a conversation of their own, under that id for them only.
    assert request.getfixturevalue(who).client.put(detail_url(body["id"]), fits, format="json").status_code == 200
    owners = Message.objects.filter(thread__user=owner.user).order_by("seq")
    assert [str(m.client_id) for m in owners] == [m["id"] for m in body["messages"]]


def test_anonymous_gets_401_and_nothing_is_written(anonymous, db, small_bounds):
    body = stored_conversation(messages=messages(4))
    assert anonymous.put(detail_url(body["id"]), body, format="json").status_code == 401
    assert row_counts() == (0, 0, 0)


# --- The request-body limit of an upload follows CONVERSATION_MAX_BYTES --------


def test_an_upload_may_be_larger_than_the_general_api_body_limit(owner, settings):
    settings.API_MAX_BODY_BYTES = 2048
    body = stored_conversation(messages=messages(1, content="x" * 5000))
    assert owner.client.put(detail_url(body["id"]), body, format="json").status_code == 200


def test_an_upload_body_beyond_its_limit_is_413_before_anything_is_read(owner, settings):
    # Limit: 1,024 stored bytes + 1 message x 1,024 bytes of framing = 2,048.
    settings.CONVERSATION_MAX_BYTES, settings.CONVERSATION_MAX_MESSAGES = 1024, 1
    settings.API_MAX_BODY_BYTES = 10 * 1024 * 1024
    body = stored_conversation(messages=messages(1, content="x" * 1900))
    assert len(json.dumps(body)) > 2048
    response = owner.client.put(detail_url(body["id"]), body, format="json")
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"
    assert "2048 bytes" in response.json()["detail"]
    assert row_counts() == (0, 0, 0)


def test_messages_are_counted_before_any_is_validated(owner, small_bounds):
    body = stored_conversation(messages=[{"not": "a message"}] * 4)
    response = owner.client.put(detail_url(body["id"]), body, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "too_many_messages"


def test_the_service_enforces_the_bounds_for_every_caller(owner, small_bounds):
    from conversations import services

    def data(count: int, content: str) -> services.ConversationData:
        return services.ConversationData(
            id=uuid.uuid4(), title=None, created_at=BASE_TIME, updated_at=BASE_TIME,
            messages=[services.MessageData(id=uuid.uuid4(), role="user", content=content, created_at=BASE_TIME)
                      for _ in range(count)],
        )

    with pytest.raises(services.TooManyMessages):
        services.conversation_upsert(owner.member, data=data(4, "hi"))
    with pytest.raises(services.ConversationTooLarge):
        services.conversation_upsert(owner.member, data=data(2, "x" * 551))
    assert row_counts() == (0, 0, 0)
    assert services.conversation_upsert(owner.member, data=data(2, "x" * 550)).applied

import json
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from conversations.models import Thread
from tests.conversations.factories import BASE_TIME, iso, stored_conversation


def put(person, body):
    # json.dumps escapes lone surrogates (\\ud800), as a real client would send them.
    return person.client.put(f"/api/conversations/{body['id']}", json.dumps(body), content_type="application/json")


@pytest.mark.parametrize("bad", ["\ud800", "a\x00b", {"k\x00": 1}, ["ok", {"deep": ["\udfff"]}]])
@pytest.mark.parametrize("where", ["input", "result"])
def test_unstorable_text_in_a_tool_call_is_a_400_and_writes_nothing(owner, bad, where):
    body = stored_conversation()
    body["messages"][1]["toolCalls"][0][where] = {"value": bad}
    response = put(owner, body)
    assert response.status_code == 400
    assert f"messages.1.toolCalls.0.{where}" in response.json()["fields"]
    assert not Thread.objects.exists()


def test_json_nested_too_deeply_is_a_400(owner):
    raw = '{"message": ' + "[" * 100_000 + "]" * 100_000 + "}"
    response = owner.client.post("/api/chat", raw, content_type="application/json")
    assert response.status_code == 400 and response.json()["code"] == "malformed_json"
    deep = f'{{"id": "{uuid.uuid4()}", "messages": ' + "[" * 100_000 + "]" * 100_000 + "}"
    response = owner.client.put(f"/api/conversations/{uuid.uuid4()}", deep, content_type="application/json")
    assert response.status_code == 400


def test_an_updated_at_ahead_of_the_servers_clock_is_accepted_and_wins_by_its_value(owner):
    """Issue 34.11, both doors: a client with a fast clock still syncs (it was a 400 past 5 minutes)."""
    ahead = timezone.now() + timedelta(days=1)
    body = stored_conversation(updated_at=ahead)
    response = put(owner, body)
    assert response.status_code == 200 and response.json()["applied"] is True
    assert Thread.objects.get(id=body["id"]).updated_at == ahead
    older = stored_conversation(body["id"], updated_at=ahead - timedelta(hours=1))  # ahead of the clock, but older
    assert put(owner, older).json()["applied"] is False
    assert put(owner, stored_conversation(body["id"], updated_at=ahead + timedelta(days=1))).json()["applied"]


def test_an_uploaded_old_conversation_counts_as_active_now(owner):
    body = stored_conversation(updated_at=BASE_TIME - timedelta(days=120))
    body["createdAt"] = iso(BASE_TIME - timedelta(days=130))
    assert put(owner, body).json()["applied"] is True
    thread = Thread.objects.get(id=body["id"])
    assert thread.updated_at == BASE_TIME - timedelta(days=120)
    assert timezone.now() - thread.last_activity_at < timedelta(minutes=1)


def test_a_created_at_later_than_updated_at_is_a_400_and_writes_nothing(owner):
    body = stored_conversation()
    body["createdAt"] = iso(BASE_TIME + timedelta(hours=1, seconds=1))  # updatedAt is BASE_TIME + 1 h
    response = put(owner, body)
    assert response.status_code == 400
    assert list(response.json()["fields"]) == ["createdAt"]
    assert not Thread.objects.exists()
    body["createdAt"] = body["updatedAt"]  # created and last changed at once: fine
    assert put(owner, body).status_code == 200


def test_a_created_at_later_than_updated_at_is_a_400_ahead_of_the_clock_too(owner):
    now = timezone.now()
    body = stored_conversation(updated_at=now)
    body["createdAt"] = iso(now + timedelta(hours=1))
    response = put(owner, body)
    assert response.status_code == 400 and "createdAt" in response.json()["fields"]
    assert not Thread.objects.exists()
    body["updatedAt"] = iso(now + timedelta(hours=2))  # both ahead, in order
    assert put(owner, body).status_code == 200


@pytest.mark.parametrize("who", ["colleague", "outsider"])
def test_others_sending_a_bad_created_at_get_the_same_400_and_change_nothing(owner, who, request):
    body = stored_conversation()
    assert put(owner, body).status_code == 200
    bad = {**body, "updatedAt": iso(BASE_TIME + timedelta(hours=2)), "createdAt": iso(BASE_TIME + timedelta(hours=3))}
    response = put(request.getfixturevalue(who), bad)
    # Validation comes before ownership, so the answer tells nothing of whose id it is.
    assert response.status_code == 400 and "createdAt" in response.json()["fields"]
    assert Thread.objects.get(id=body["id"]).created_at == BASE_TIME


def test_anonymous_sending_a_bad_created_at_gets_401(anonymous, db):
    body = stored_conversation()
    body["createdAt"] = iso(BASE_TIME + timedelta(hours=3))
    response = anonymous.put(f"/api/conversations/{body['id']}", body, format="json")
    assert response.status_code == 401
    assert not Thread.objects.exists()

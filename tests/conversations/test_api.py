import uuid
from datetime import timedelta

import pytest
from rest_framework.test import APIClient

from assistant_engine.organizations.models import Membership
from conversations.models import Message, Thread, ToolCall
from tests.conftest import make_person, token_just_used
from tests.conversations.factories import BASE_TIME, iso, make_thread, stored_conversation

LIST_URL = "/api/conversations"


def detail_url(thread_id) -> str:
    return f"/api/conversations/{thread_id}"


# --- GET /api/conversations --------------------------------------------------


def test_owner_lists_own_conversations_newest_first(owner):
    older = make_thread(owner, title="older", updated_at=BASE_TIME)
    newer = make_thread(owner, title="newer", updated_at=BASE_TIME + timedelta(days=1))
    response = owner.client.get(LIST_URL)
    assert response.status_code == 200
    body = response.json()
    assert [item["id"] for item in body["results"]] == [str(newer.id), str(older.id)]
    assert body["count"] == 2
    assert set(body["results"][0]) == {"id", "title", "createdAt", "updatedAt", "status", "model"}


def test_colleague_and_outsider_see_nothing_of_the_owner(owner, colleague, outsider):
    make_thread(owner)
    for person in (colleague, outsider):
        response = person.client.get(LIST_URL)
        assert response.status_code == 200
        assert response.json()["count"] == 0
        assert response.json()["results"] == []


def test_anonymous_list_gets_401(anonymous):
    response = anonymous.get(LIST_URL)
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


def test_list_is_paginated(owner, settings):
    settings.CONVERSATIONS_PAGE_SIZE = 2
    for day in range(5):
        make_thread(owner, updated_at=BASE_TIME + timedelta(days=day))
    first = owner.client.get(LIST_URL).json()
    assert first["count"] == 5 and len(first["results"]) == 2 and first["next"]
    last = owner.client.get(LIST_URL, {"page": 3}).json()
    assert len(last["results"]) == 1 and last["next"] is None


def test_list_runs_a_constant_number_of_queries(owner, django_assert_num_queries):
    token_just_used(owner)
    for count in (1, 30):
        Thread.objects.all().delete()
        for day in range(count):
            make_thread(owner, updated_at=BASE_TIME + timedelta(days=day), messages=2, calls=1)
        # token auth (1), membership (1), count (1), page (1)
        with django_assert_num_queries(4):
            assert owner.client.get(LIST_URL).status_code == 200


# --- GET /api/conversations/{id} ---------------------------------------------


def test_owner_reads_a_whole_conversation(owner):
    thread = make_thread(owner, messages=3, calls=2)
    response = owner.client.get(detail_url(thread.id))
    assert response.status_code == 200
    body = response.json()
    assert body["id"] == str(thread.id)
    assert [m["content"] for m in body["messages"]] == ["message 0", "message 1", "message 2"]
    assert [c["id"] for c in body["messages"][1]["toolCalls"]] == ["toolu_1_0", "toolu_1_1"]
    assert body["messages"][1]["toolCalls"][0]["result"] == {"notes": []}


@pytest.mark.parametrize("who", ["colleague", "outsider"])
def test_others_get_404_reading(owner, colleague, outsider, who):
    thread = make_thread(owner, messages=1)
    response = {"colleague": colleague, "outsider": outsider}[who].client.get(detail_url(thread.id))
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


def test_anonymous_read_gets_401(owner, anonymous):
    thread = make_thread(owner)
    assert anonymous.get(detail_url(thread.id)).status_code == 401


def test_malformed_id_is_a_clear_400(owner):
    response = owner.client.get(detail_url("not-a-uuid"))
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_id"
    assert "id" in response.json()["fields"]


def test_read_runs_a_constant_number_of_queries(owner, django_assert_num_queries):
    token_just_used(owner)
    for messages, calls in ((1, 1), (40, 5)):
        thread = make_thread(owner, messages=messages, calls=calls)
        # token auth, membership, thread, messages, tool calls, files, the assistant's cards
        with django_assert_num_queries(7):
            response = owner.client.get(detail_url(thread.id))
        assert len(response.json()["messages"]) == messages


# --- PUT /api/conversations/{id} ---------------------------------------------


def test_owner_creates_a_conversation_by_upsert_and_reads_it_back_exactly(owner):
    body = stored_conversation()
    response = owner.client.put(detail_url(body["id"]), body, format="json")
    assert response.status_code == 200
    assert response.json()["applied"] is True
    stored = owner.client.get(detail_url(body["id"])).json()
    assert stored["title"] == "Offline title"
    assert stored["updatedAt"] == body["updatedAt"]
    assert [m["id"] for m in stored["messages"]] == [m["id"] for m in body["messages"]]
    assert stored["messages"][1]["toolCalls"][0]["result"] == body["messages"][1]["toolCalls"][0]["result"]
    assert stored["messages"][1]["toolCalls"][0]["input"] == {"query": "Zurich"}
    thread = Thread.objects.get(id=body["id"])
    assert thread.user_id == owner.user.id and thread.organization_id == owner.organization.id


def test_any_json_result_round_trips(owner):
    for result in ["plain text", 42, [1, "two", {"three": 3}], None, True, {"deep": {"er": [{"x": "🙂"}]}}]:
        body = stored_conversation()
        body["messages"][1]["toolCalls"][0]["result"] = result
        owner.client.put(detail_url(body["id"]), body, format="json")
        stored = owner.client.get(detail_url(body["id"])).json()
        assert stored["messages"][1]["toolCalls"][0]["result"] == result


def test_a_large_raw_result_is_stored_whole(owner):
    body = stored_conversation()
    big = "x" * 500_000
    body["messages"][1]["toolCalls"][0]["result"] = {"blob": big}
    assert owner.client.put(detail_url(body["id"]), body, format="json").status_code == 200
    assert ToolCall.objects.get(message__thread_id=body["id"]).result == {"blob": big}


def test_user_id_in_the_body_is_ignored(owner, colleague):
    body = stored_conversation()
    body["userId"] = colleague.user.id
    assert owner.client.put(detail_url(body["id"]), body, format="json").status_code == 200
    assert Thread.objects.get(id=body["id"]).user_id == owner.user.id


def test_newer_write_wins(owner):
    body = stored_conversation(updated_at=BASE_TIME + timedelta(hours=1))
    owner.client.put(detail_url(body["id"]), body, format="json")
    newer = stored_conversation(body["id"], updated_at=BASE_TIME + timedelta(hours=2), title="Newer")
    response = owner.client.put(detail_url(body["id"]), newer, format="json")
    assert response.json()["applied"] is True
    assert response.json()["conversation"]["title"] == "Newer"
    assert Message.objects.filter(thread_id=body["id"]).count() == 2


def test_older_write_loses_and_the_answer_carries_the_winner(owner):
    body = stored_conversation(updated_at=BASE_TIME + timedelta(hours=2), title="Stored")
    owner.client.put(detail_url(body["id"]), body, format="json")
    older = stored_conversation(body["id"], updated_at=BASE_TIME + timedelta(hours=1), title="Older", messages=[])
    response = owner.client.put(detail_url(body["id"]), older, format="json")
    assert response.status_code == 200
    assert response.json()["applied"] is False
    assert response.json()["conversation"]["title"] == "Stored"
    assert len(response.json()["conversation"]["messages"]) == 2
    assert Thread.objects.get(id=body["id"]).title == "Stored"


@pytest.mark.parametrize("who", ["colleague", "outsider"])
def test_others_cannot_overwrite_or_tell_the_id_exists_they_get_their_own(owner, colleague, outsider, who):
    """An upload to another person's id answers as one to a fresh id: a new
    conversation of theirs, which /api/ names by that id for them only."""
    thread = make_thread(owner, title="Mine", messages=2)
    other = {"colleague": colleague, "outsider": outsider}[who]
    body = stored_conversation(thread.id, updated_at=BASE_TIME + timedelta(days=9), title="Hijacked")
    fresh = stored_conversation(uuid.uuid4(), updated_at=BASE_TIME + timedelta(days=9), title="Hijacked")
    taken, free = (other.client.put(detail_url(b["id"]), b, format="json") for b in (body, fresh))
    assert taken.status_code == free.status_code == 200
    assert taken.json()["conversation"]["id"] == str(thread.id)  # as the fresh one's is its URL's id
    def shape(response):
        conversation = response.json()["conversation"]
        return sorted(conversation), conversation["title"], [m["content"] for m in conversation["messages"]]

    assert shape(taken) == shape(free)
    thread.refresh_from_db()
    assert thread.title == "Mine" and thread.user_id == owner.user.id
    assert Message.objects.filter(thread=thread).count() == 2
    assert owner.client.get(detail_url(thread.id)).json()["title"] == "Mine"
    assert other.client.get(detail_url(thread.id)).json()["title"] == "Hijacked"
    for person in (other, owner):
        assert str(thread.id) in [c["id"] for c in person.client.get(LIST_URL).json()["results"]]


def test_an_id_taken_first_by_someone_else_is_still_yours_to_use(owner, outsider):
    """Squatting: the outsider uploads under the id the owner's client will use; the owner's upload, reads,
    chat and delete under that id reach the owner's own conversation."""
    squatted = uuid.uuid4()
    outsider.client.put(detail_url(squatted), stored_conversation(squatted, title="Squat"), format="json")
    response = owner.client.put(detail_url(squatted), stored_conversation(squatted, title="Plans"), format="json")
    assert response.status_code == 200 and response.json()["conversation"]["id"] == str(squatted)
    assert owner.client.get(detail_url(squatted)).json()["title"] == "Plans"
    assert owner.client.patch(detail_url(squatted), {"title": "Plans 2"}, format="json").json()["id"] == str(squatted)
    assert owner.client.delete(detail_url(squatted)).status_code == 204
    assert outsider.client.get(detail_url(squatted)).json()["title"] == "Squat"


def test_anonymous_upsert_gets_401_and_writes_nothing(anonymous, db):
    body = stored_conversation()
    assert anonymous.put(detail_url(body["id"]), body, format="json").status_code == 401
    assert not Thread.objects.exists()


def test_upsert_while_responding_is_409(owner):
    thread = make_thread(owner, status=Thread.Status.RESPONDING)
    body = stored_conversation(thread.id, updated_at=BASE_TIME + timedelta(days=1))
    response = owner.client.put(detail_url(thread.id), body, format="json")
    assert response.status_code == 409
    assert response.json()["code"] == "conversation_busy"


def test_title_is_derived_from_the_first_user_message_when_not_given(owner):
    body = stored_conversation(title="")
    body["messages"][0]["content"] = "  Plan   the\n\tteam offsite " + "in Lausanne " * 10
    owner.client.put(detail_url(body["id"]), body, format="json")
    title = Thread.objects.get(id=body["id"]).title
    assert title.startswith("Plan the team offsite in Lausanne")
    assert len(title) <= 60 and "  " not in title


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda b: b.update(surprise=1), "surprise"),
        (lambda b: b["messages"][0].update(extra="x"), "messages.0.extra"),
        (lambda b: b["messages"][1]["toolCalls"][0].update(bogus=True), "messages.1.toolCalls.0.bogus"),
        (lambda b: b["messages"][0].update(role="robot"), "messages.0.role"),
        (lambda b: b["messages"][0].update(id="nope"), "messages.0.id"),
        (lambda b: b["messages"][0].update(content=12), "messages.0.content"),
        (lambda b: b.update(updatedAt="yesterday"), "updatedAt"),
        (lambda b: b.update(messages="many"), "messages"),
        (lambda b: b.pop("createdAt"), "createdAt"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_writes_nothing(owner, mutate, field):
    body = stored_conversation()
    mutate(body)
    response = owner.client.put(detail_url(body["id"]), body, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert field in response.json()["fields"]
    assert not Thread.objects.exists()


def test_the_url_names_the_conversation_whatever_the_bodys_id(owner):
    """The schema says the body's `id` is read-only, sent back and ignored (JSON
    Schema can't say "equals the URL's"): once refused though the schema allowed it."""
    body = stored_conversation()
    conversation_id = body.pop("id")
    response = owner.client.put(detail_url(conversation_id), body, format="json")
    assert response.status_code == 200 and response.json()["conversation"]["id"] == conversation_id
    other = str(uuid.uuid4())
    response = owner.client.put(detail_url(other), {**body, "id": conversation_id}, format="json")
    assert response.status_code == 200 and response.json()["conversation"]["id"] == other
    assert set(Thread.objects.values_list("id", flat=True)) == {uuid.UUID(conversation_id), uuid.UUID(other)}
    schema = owner.client.get("/api/schema/?format=json").json()
    request = schema["components"]["schemas"]["ConversationRequest"]
    assert "id" not in request["required"] and "ignored" in request["properties"]["id"]["description"]


def test_malformed_json_is_a_400(owner):
    response = owner.client.put(detail_url(uuid.uuid4()), "{not json", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["code"] == "malformed_json"


def test_duplicate_message_ids_are_refused(owner):
    body = stored_conversation()
    body["messages"][1]["id"] = body["messages"][0]["id"]
    response = owner.client.put(detail_url(body["id"]), body, format="json")
    assert response.status_code == 400
    assert "messages" in response.json()["fields"]


def test_other_api_bodies_keep_the_general_limit(owner, settings):
    # A conversation upload's limit follows CONVERSATION_MAX_BYTES
    # (test_upload_bounds.py); every other API body keeps API_MAX_BODY_BYTES.
    settings.API_MAX_BODY_BYTES = 2048
    response = owner.client.post("/api/chat", {"message": "x" * 5000}, format="json")
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"
    assert not Thread.objects.exists()


def test_a_failure_midway_writes_nothing(owner, monkeypatch):
    body = stored_conversation()
    owner.client.put(detail_url(body["id"]), body, format="json")
    newer = stored_conversation(body["id"], updated_at=BASE_TIME + timedelta(days=3), title="Half")

    def explode(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(ToolCall.objects, "bulk_create", explode)
    with pytest.raises(RuntimeError):
        owner.client.put(detail_url(body["id"]), newer, format="json")
    thread = Thread.objects.get(id=body["id"])
    assert thread.title == "Offline title"
    assert Message.objects.filter(thread=thread).count() == 2


# --- DELETE /api/conversations/{id} ------------------------------------------


def test_owner_deletes_with_204_and_everything_goes(owner):
    thread = make_thread(owner, messages=2, calls=1)
    assert owner.client.delete(detail_url(thread.id)).status_code == 204
    assert not Thread.objects.exists() and not Message.objects.exists() and not ToolCall.objects.exists()


@pytest.mark.parametrize("who", ["colleague", "outsider"])
def test_others_get_404_deleting_and_nothing_goes(owner, colleague, outsider, who):
    thread = make_thread(owner, messages=1)
    response = {"colleague": colleague, "outsider": outsider}[who].client.delete(detail_url(thread.id))
    assert response.status_code == 404
    assert Thread.objects.filter(id=thread.id).exists()


def test_anonymous_delete_gets_401(owner, anonymous):
    thread = make_thread(owner)
    assert anonymous.delete(detail_url(thread.id)).status_code == 401
    assert Thread.objects.filter(id=thread.id).exists()


def test_delete_while_responding_is_409(owner):
    thread = make_thread(owner, status=Thread.Status.RESPONDING)
    response = owner.client.delete(detail_url(thread.id))
    assert response.status_code == 409
    assert response.json()["code"] == "conversation_busy"
    assert Thread.objects.filter(id=thread.id).exists()


# --- Organizations -----------------------------------------------------------


def test_a_person_without_organization_gets_403_no_organization(owner):
    Membership.objects.filter(user=owner.user).delete()  # their tokens with it: the session still opens
    session = APIClient()
    session.force_login(owner.user)
    response = session.get(LIST_URL)
    assert response.status_code == 403
    assert response.json()["code"] == "no_organization"


def test_a_person_in_two_organizations_sees_each_ones_conversations_under_its_header(owner, globex):
    # The header chooses for a session; a token acts in its own organization (tests/organizations/test_tokens.py).
    session = APIClient()
    session.force_login(owner.user)
    in_acme = make_thread(owner, title="acme thread")
    Membership.objects.create(organization=globex, user=owner.user)
    in_globex = Thread.objects.create(
        organization=globex, user=owner.user, title="globex thread",
        created_at=BASE_TIME, updated_at=BASE_TIME, last_activity_at=BASE_TIME,
    )
    acme_list = session.get(LIST_URL, HTTP_X_ORGANIZATION="acme").json()
    globex_list = session.get(LIST_URL, HTTP_X_ORGANIZATION="globex").json()
    assert [t["id"] for t in acme_list["results"]] == [str(in_acme.id)]
    assert [t["id"] for t in globex_list["results"]] == [str(in_globex.id)]
    assert session.get(detail_url(in_globex.id), HTTP_X_ORGANIZATION="acme").status_code == 404
    response = session.get(LIST_URL)
    assert response.status_code == 400
    assert response.json()["code"] == "organization_required"


def test_an_organization_that_is_not_yours_is_not_found(owner):
    response = owner.client.get(LIST_URL, HTTP_X_ORGANIZATION="globex")
    assert response.status_code == 404
    assert response.json()["code"] == "organization_not_found"


@pytest.mark.parametrize("slug", ["acme\x00", "\x00"])
def test_an_organization_header_with_a_nul_is_not_found_not_a_500(owner, slug):
    """No slug holds a NUL (and PostgreSQL text can't): with a token and with a session."""
    session = APIClient()
    session.force_login(owner.user)
    for client in (owner.client, session):
        response = client.get(LIST_URL, HTTP_X_ORGANIZATION=slug)
        assert response.status_code == 404 and response.json()["code"] == "organization_not_found"


def test_session_login_works_for_the_api(owner, client):
    client.force_login(owner.user)
    assert client.get(LIST_URL).status_code == 200


def test_make_person_helper_isolated(acme):
    person = make_person("zoe", acme)
    assert person.client.get(LIST_URL).json()["count"] == 0
    assert iso(BASE_TIME).endswith("Z")

"""An upsert writes only what changed: unchanged messages and tool calls keep
their rows (and what links to them), so re-uploading a long conversation with
one new message costs about one message's writes."""

import uuid
from datetime import timedelta

import pytest

from conversations import services
from conversations.api import conversation_data
from conversations.models import Message, ToolCall
from conversations.serializers import ConversationSerializer
from tests.conversations.factories import BASE_TIME, iso, stored_conversation
from tests.conversations.test_api import detail_url


def long_conversation(count: int) -> dict:
    return stored_conversation(messages=[
        {
            "id": str(uuid.uuid4()),
            "role": "assistant" if index % 2 else "user",
            "content": f"message {index}",
            "createdAt": iso(BASE_TIME + timedelta(seconds=index)),
            "toolCalls": [{"id": f"toolu_{index}", "name": "search_notes", "input": {"query": "x"},
                           "result": {"notes": [index, 2.5, None, True]}}] if index % 2 else [],
        }
        for index in range(count)
    ])


def newer(body: dict, *, messages: list[dict], hours: int = 2) -> dict:
    return {**body, "updatedAt": iso(BASE_TIME + timedelta(hours=hours)), "messages": messages}


def upsert(owner, body: dict) -> services.UpsertOutcome:
    serializer = ConversationSerializer(data=body)
    serializer.is_valid(raise_exception=True)
    data = conversation_data(uuid.UUID(body["id"]), serializer.validated_data)
    return services.conversation_upsert(owner.member, data=data)


def rows() -> dict:
    """Every message and tool call row by primary key, as stored."""
    return {
        **{m.pk: (m.client_id, m.seq, m.role, m.content, m.created_at) for m in Message.objects.all()},
        **{c.pk: (c.message_id, c.position, c.tool_use_id, c.result) for c in ToolCall.objects.all()},
    }


@pytest.mark.parametrize("length", [10, 300])
def test_one_new_message_costs_one_insert_whatever_the_length(owner, length, django_assert_num_queries):
    body = long_conversation(length)
    upsert(owner, body)
    before = rows()
    added = long_conversation(1)["messages"]
    # savepoint, thread lock (the person's own only: no other ownership check),
    # thread update, stored messages, their tool calls, one insert, release:
    # the same for 10 or 300 messages.
    with django_assert_num_queries(7):
        outcome = upsert(owner, newer(body, messages=body["messages"] + added))
    assert outcome.writes == services.UpsertWrites(messages_created=1)
    after = rows()
    assert {pk: after[pk] for pk in before} == before
    assert len(after) == len(before) + 1


def test_the_same_upload_again_writes_no_message_or_tool_call(owner, django_assert_num_queries):
    body = long_conversation(20)
    upsert(owner, body)
    before = rows()
    with django_assert_num_queries(6):
        outcome = upsert(owner, newer(body, messages=body["messages"]))
    assert outcome.writes.rows == 0
    assert rows() == before


def test_an_edited_message_is_updated_in_place(owner):
    body = long_conversation(6)
    upsert(owner, body)
    edited = [dict(m) for m in body["messages"]]
    edited[2]["content"] = "edited"
    outcome = upsert(owner, newer(body, messages=edited))
    assert outcome.writes == services.UpsertWrites(messages_updated=1)
    message = Message.objects.get(client_id=edited[2]["id"])
    assert (message.seq, message.content) == (2, "edited")


def test_a_changed_tool_result_replaces_that_messages_tool_calls_only(owner):
    body = long_conversation(6)
    upsert(owner, body)
    untouched = set(ToolCall.objects.exclude(message__client_id=body["messages"][3]["id"]).values_list("pk"))
    edited = [dict(m) for m in body["messages"]]
    # 1 and true are equal in Python; the stored JSON must still change.
    edited[3]["toolCalls"] = [{**edited[3]["toolCalls"][0], "result": {"notes": [True, 2.5, None, True]}}]
    outcome = upsert(owner, newer(body, messages=edited))
    assert outcome.writes == services.UpsertWrites(tool_calls_created=1, tool_calls_deleted=1)
    assert ToolCall.objects.get(message__client_id=edited[3]["id"]).result == {"notes": [True, 2.5, None, True]}
    assert untouched <= set(ToolCall.objects.values_list("pk"))


def test_a_removed_message_goes_with_its_tool_calls_and_the_rest_close_up(owner):
    body = long_conversation(6)
    upsert(owner, body)
    kept = body["messages"][:1] + body["messages"][2:]
    outcome = upsert(owner, newer(body, messages=kept))
    assert outcome.writes == services.UpsertWrites(messages_deleted=1, messages_updated=4, tool_calls_deleted=1)
    assert [(str(m.client_id), m.seq) for m in Message.objects.order_by("seq")] == [
        (m["id"], seq) for seq, m in enumerate(kept)
    ]


def test_messages_inserted_and_reordered_take_their_new_places(owner):
    body = long_conversation(5)
    upsert(owner, body)
    first, second, third, fourth, fifth = body["messages"]
    inserted = long_conversation(1)["messages"][0]
    order = [fifth, first, inserted, third, second, fourth]
    upsert(owner, newer(body, messages=order))
    assert [str(m.client_id) for m in Message.objects.order_by("seq")] == [m["id"] for m in order]
    response = owner.client.get(detail_url(body["id"]))
    assert [m["id"] for m in response.json()["messages"]] == [m["id"] for m in order]
    assert response.json()["messages"][0]["toolCalls"] == []
    assert response.json()["messages"][4]["toolCalls"][0]["id"] == "toolu_1"


def test_what_the_server_knows_of_an_unchanged_message_survives(owner):
    body = long_conversation(2)
    upsert(owner, body)
    turn_id = uuid.uuid4()
    Message.objects.filter(client_id=body["messages"][1]["id"]).update(turn_id=turn_id, notice="stopped")
    upsert(owner, newer(body, messages=body["messages"]))
    assert Message.objects.get(client_id=body["messages"][1]["id"]).turn_id == turn_id
    edited = [body["messages"][0], {**body["messages"][1], "content": "changed"}]
    upsert(owner, newer(body, messages=edited, hours=3))
    changed = Message.objects.get(client_id=body["messages"][1]["id"])
    assert (changed.turn_id, changed.notice) == (None, "")


def test_a_card_stays_linked_to_its_tool_call_across_a_reupload(owner):
    from tests.web.conftest import make_card

    body = long_conversation(4)
    outcome = upsert(owner, body)
    card = make_card(owner, outcome.thread)
    linked = card.tool_call_id
    assert linked is not None
    upsert(owner, newer(body, messages=body["messages"] + long_conversation(1)["messages"]))
    card.refresh_from_db()
    assert card.tool_call_id == linked

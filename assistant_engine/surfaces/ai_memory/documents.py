"""The esm-ai-memory StoredConversation: read from the client's JSON, written back.

What the server interprets (ids, title, dates, roles, text, tool calls) goes
through conversations' own upsert; the document itself is kept as the client
sent it (Thread/Message.client_json) and given back unchanged, with the
server's own fields (status, notice, cards, …) added where the client has no
field of that name. A message the client sent is never rewritten by the
server (a turn only appends), so its document stays true; the conversation's
dates and title are the client's while its last write is the newest version,
and the server's (in the client's date format) once a turn has moved it on.
"""

import json

from rest_framework import serializers

from assistant_engine.foundation.serializers import StorableJSONField, StrictCharField
from assistant_engine.surfaces.ai_memory import ids
from assistant_engine.surfaces.ai_memory.dates import ClientDateField, as_client_writes
from conversations.models import Message, Thread
from conversations.serializers import conversation_to_json, count_messages
from conversations.services import ConversationData, MessageData, ToolCallData


class ClientIdField(serializers.Field):
    default_error_messages = {
        "invalid": "Must be 1 to 200 characters among letters, digits, '-', '_', ':' and '.'.",
    }

    def to_internal_value(self, data):
        if not ids.is_client_id(data):
            self.fail("invalid")
        return data


class ToolCallSerializer(serializers.Serializer):
    """Unknown fields are kept (in the document), not refused: only these are read."""

    id = StrictCharField(max_length=200)
    name = StrictCharField(max_length=200)
    input = StorableJSONField(required=False, default=dict)
    result = StorableJSONField(required=False, allow_null=True, default=None)
    isError = serializers.BooleanField(required=False, default=False)  # noqa: N815


class MessageSerializer(serializers.Serializer):
    id = ClientIdField()
    role = serializers.ChoiceField(choices=Message.Role.choices)
    content = StrictCharField(allow_blank=True, trim_whitespace=False)
    # Optional, as in the seed's StoredMessage: left out, the server's time (kept from then on).
    createdAt = ClientDateField(required=False)  # noqa: N815
    toolCalls = ToolCallSerializer(many=True, required=False, default=list)  # noqa: N815


class ConversationSerializer(serializers.Serializer):
    id = ClientIdField()
    title = StrictCharField(required=False, allow_blank=True, allow_null=True, max_length=500)
    createdAt = ClientDateField(required=False)  # noqa: N815
    # Last write wins by this value, ahead of the server's clock too (conversations/versions.py):
    # only what is no date (or past 9999) is refused.
    updatedAt = ClientDateField()  # noqa: N815
    messages = MessageSerializer(many=True)

    def to_internal_value(self, data):
        count_messages(data)
        return super().to_internal_value(data)

    def validate_messages(self, messages):
        # Unique as strings and as the UUIDs they map to (a string spelling
        # another's derived UUID would otherwise collide in the database).
        chosen = [message["id"] for message in messages]
        if len(set(chosen)) != len(chosen) or len({ids.message_uuid(i) for i in chosen}) != len(chosen):
            raise serializers.ValidationError("Message ids must be unique within a conversation.")
        return messages

    def validate(self, attrs):
        if attrs.get("createdAt") and attrs["createdAt"] > attrs["updatedAt"]:
            raise serializers.ValidationError({"createdAt": ["Must not be later than updatedAt."]})
        # The whole document is stored as text: what the database can't store
        # (NUL, lone surrogates) is refused in the fields the server ignores too.
        StorableJSONField().to_internal_value(self.initial_data)
        return attrs


def conversation_data(document: dict, validated: dict) -> ConversationData:
    """What conversations' upsert needs, with the client's document kept beside it."""
    return ConversationData(
        id=None,  # the person's conversation of that id, or a new one under the server's key
        external_id=validated["id"],
        title=validated.get("title"),
        created_at=validated.get("createdAt"),
        updated_at=validated["updatedAt"],
        # The messages are stored each with its own document: a placeholder
        # keeps their place among the client's keys.
        client_json=_compact({**document, "messages": None}),
        messages=[
            _message_data(sent, checked)
            for sent, checked in zip(document["messages"], validated["messages"], strict=True)
        ],
    )


def _message_data(sent: dict, checked: dict) -> MessageData:
    return MessageData(
        id=ids.message_uuid(checked["id"]),
        external_id=ids.external_id(checked["id"]),
        role=checked["role"],
        content=checked["content"],
        created_at=checked.get("createdAt"),
        # The text is stored once, in Message.content; null marks its place.
        client_json=_compact({**sent, "content": None}),
        tool_calls=[
            ToolCallData(tool_use_id=call["id"], name=call["name"], input=call["input"],
                         result=call["result"], is_error=call["isError"])
            for call in checked["toolCalls"]
        ],
    )


def _compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# --- back to the client -----------------------------------------------------


def client_id_of(thread: Thread) -> str:
    return thread.external_id or str(thread.id)


def render_conversation(thread: Thread) -> dict:
    """A thread (with prefetched messages and tool calls) as the client's document.
    A date the client didn't write (a message a turn appended, a field it left
    out) comes in the form it writes its conversation's updatedAt in."""
    server = conversation_to_json(thread)
    server["id"] = client_id_of(thread)
    like = json.loads(thread.client_json).get("updatedAt") if thread.client_json else None
    server["createdAt"] = as_client_writes(thread.created_at, like)
    server["messages"] = [
        _render_message(message, rendered, like)
        for message, rendered in zip(thread.messages.all(), server["messages"], strict=True)
    ]
    if not thread.client_json:
        return server
    document = _thread_document(thread, server)
    document["messages"] = server["messages"]
    return _with_server_fields(document, server)


def render_summary(thread: Thread) -> dict:
    summary = {
        "id": client_id_of(thread),
        "title": thread.title,
        "createdAt": ClientDateField().to_representation(thread.created_at),
        "updatedAt": ClientDateField().to_representation(thread.updated_at),
        "status": thread.status,
    }
    if not thread.client_json:
        return summary
    document = _thread_document(thread, summary)
    summary["createdAt"] = as_client_writes(thread.created_at, document.get("updatedAt"))  # when it sent none
    return {**summary, **{key: document[key] for key in ("title", "createdAt", "updatedAt") if key in document}}


def _thread_document(thread: Thread, server: dict) -> dict:
    """The client's conversation fields; its title and dates give way to the
    server's once something else (a turn) has written a newer version."""
    document = json.loads(thread.client_json)
    if _is_current(document, thread):
        return document
    document["title"] = server["title"]
    for key, moment in (("createdAt", thread.created_at), ("updatedAt", thread.updated_at)):
        document[key] = as_client_writes(moment, document.get(key, document.get("updatedAt")))
    return document


def _is_current(document: dict, thread: Thread) -> bool:
    try:
        return ClientDateField().to_internal_value(document.get("updatedAt")) == thread.updated_at
    except serializers.ValidationError:
        return False


def _render_message(message: Message, server: dict, like) -> dict:
    server["createdAt"] = as_client_writes(message.created_at, like)
    if not message.client_json:
        server["id"] = message.external_id or server["id"]
        return server
    document = json.loads(message.client_json)
    document["content"] = message.content
    return _with_server_fields(document, server)


def _with_server_fields(document: dict, server: dict) -> dict:
    """The client's fields as sent; the server's only where the client has none of that name."""
    for key, value in server.items():
        document.setdefault(key, value)
    return document

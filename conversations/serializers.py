"""The StoredConversation contract (camelCase, as the offline client sends it)."""

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from assistant_engine.foundation.api_errors import ApiError, bad_request
from assistant_engine.foundation.serializers import (
    StorableJSONField,
    StrictBooleanField,
    StrictCharField,
    StrictSerializer,
    StrictUUIDField,
)
from conversations.extensions import conversation_extras
from conversations.models import Message, Thread
from conversations.selectors import summary_of


class ToolCallSerializer(StrictSerializer):
    id = StrictCharField(max_length=200, help_text="The model's tool-use id.")
    name = StrictCharField(max_length=200)
    input = StorableJSONField(required=False, default=dict)
    result = StorableJSONField(required=False, allow_null=True, default=None, help_text="Any JSON, stored whole.")
    isError = StrictBooleanField(required=False, default=False)  # noqa: N815


class AttachmentSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    type = serializers.CharField(help_text="Judged from the content.")
    size = serializers.IntegerField(help_text="Bytes.")


class MessageSerializer(StrictSerializer):
    id = StrictUUIDField(help_text="Chosen by the client; unique within its conversation.")
    role = serializers.ChoiceField(choices=Message.Role.choices)
    content = StrictCharField(allow_blank=True, trim_whitespace=False)
    createdAt = serializers.DateTimeField()  # noqa: N815
    toolCalls = ToolCallSerializer(many=True, required=False, default=list)  # noqa: N815
    status = serializers.ChoiceField(read_only=True, choices=Message.Status.choices, help_text="Server-side.")
    notice = StrictCharField(read_only=True, help_text="Why a reply stopped short, for the person (server-side).")
    supersededAt = serializers.DateTimeField(read_only=True, allow_null=True, help_text=(  # noqa: N815
        "Set on a previous version (server-side): a reply regenerated, or a user message edited and resent, "
        "with the reply it had. Kept and shown, never sent to the model again. The new version follows it."))
    replaces = StrictUUIDField(read_only=True, allow_null=True, help_text=(
        "On a user message edited and resent (server-side): the id of the message it replaces."))
    afterReading = serializers.ListField(child=serializers.CharField(), read_only=True, help_text=(  # noqa: N815
        "On a reply the model wrote after reading content from outside the product (server-side): where it "
        "came from (\"mail from x@y\", \"file z.pdf\"), to show the person with it. Absent otherwise. The "
        "content is the model's text as written: a client shows its links to other hosts as full addresses."))
    # Optional in the document (foundation.openapi.OPTIONAL_IN_ANSWERS).
    attachments = AttachmentSerializer(many=True, read_only=True, help_text=(
        "The files attached to the message (server-side; POST /api/chat `attachments`): absent when none. "
        "Their content: GET /api/files/{id}/content."))


# The assistant registers the cards (conversations.extensions) and documents
# their component, ActionCard; this app can't import it, so it names it.
@extend_schema_field({"type": "array", "items": {"$ref": "#/components/schemas/ActionCard"}})
class CardListField(serializers.ListField):
    child = serializers.DictField()


def count_messages(data) -> None:
    """Counted before any message is validated: a body of 86,000 tiny messages
    would otherwise cost seconds of CPU before its refusal (both doors)."""
    if isinstance(data, dict) and isinstance(data.get("messages"), list) \
            and len(data["messages"]) > settings.CONVERSATION_MAX_MESSAGES:
        raise too_many_messages()


class ConversationSerializer(StrictSerializer):
    # Read-only: the URL names the conversation (JSON Schema can't say that a
    # body field must equal a path parameter, so the body's is ignored).
    id = StrictUUIDField(read_only=True, help_text="The id in the URL.")
    title = StrictCharField(required=False, allow_blank=True, allow_null=True, max_length=500)
    createdAt = serializers.DateTimeField()  # noqa: N815
    updatedAt = serializers.DateTimeField(  # noqa: N815
        help_text="Last write wins by this value, ahead of the server's clock too: "
        "a client with a fast clock still syncs. A write of the server's (a turn, a rename) dates itself after "
        "the stored version."
    )
    messages = MessageSerializer(many=True, help_text="In order; each message id once.")
    userId = serializers.IntegerField(read_only=True, help_text="The owner; ignored on input.")  # noqa: N815
    status = serializers.ChoiceField(read_only=True, choices=Thread.Status.choices, help_text="Server-side.")
    model = StrictCharField(read_only=True, help_text=(
        "The conversation's model option (server-side; set with PATCH); \"\": the organization's."))
    summary = serializers.JSONField(read_only=True, allow_null=True, help_text=(
        "Server-side. When the conversation outgrew its model's window, what the model is sent instead of its "
        "older messages: {content, createdAt, summarizedThrough (the id of the last message it stands for), "
        "firstMessageInFull (the first one the model still receives whole)}; null: every message is sent whole. "
        "The messages themselves are all kept."))
    cards = CardListField(
        read_only=True,
        help_text="The assistant's confirmation cards of this conversation (server-side; ignored on input).",
    )

    def to_internal_value(self, data):
        if isinstance(data, dict):
            data = {key: value for key, value in data.items() if key != "userId"}
        count_messages(data)
        return super().to_internal_value(data)

    def validate(self, attrs):
        # A conversation can't have been created after its last change.
        if attrs["createdAt"] > attrs["updatedAt"]:
            raise serializers.ValidationError({"createdAt": ["Must not be later than updatedAt."]})
        return attrs

    def validate_messages(self, messages):
        ids = [message["id"] for message in messages]
        if len(ids) != len(set(ids)):
            raise serializers.ValidationError("Message ids must be unique within a conversation.")
        return messages


def too_many_messages() -> ApiError:
    return bad_request(
        "too_many_messages",
        f"A conversation may hold at most {settings.CONVERSATION_MAX_MESSAGES} messages.",
        {"messages": ["Too many messages."]},
    )


class ConversationSummarySerializer(serializers.Serializer):
    id = serializers.UUIDField(source="api_id")
    title = StrictCharField()
    createdAt = serializers.DateTimeField(source="created_at")  # noqa: N815
    updatedAt = serializers.DateTimeField(source="updated_at")  # noqa: N815
    status = serializers.ChoiceField(choices=Thread.Status.choices)
    model = StrictCharField(source="model_option", help_text="The conversation's model option; \"\": the "
                            "organization's.")


class ChlovaConversationSerializer(serializers.Serializer):
    """One entry of CHLOVA's list (its docs/conversations.md: "id, titre, dates"),
    under ASSISTANT_CONVERSATIONS_LIST=chlova."""

    id = serializers.UUIDField(source="api_id")
    title = StrictCharField()
    createdAt = serializers.DateTimeField(source="created_at")  # noqa: N815
    updatedAt = serializers.DateTimeField(source="updated_at")  # noqa: N815


class UpsertResultSerializer(serializers.Serializer):
    applied = serializers.BooleanField(help_text="False when the stored version was newer and won.")
    conversation = ConversationSerializer()


def conversation_to_json(thread) -> dict:
    """A thread (with prefetched messages and tool calls) as a StoredConversation,
    with the extra fields other apps registered (conversations.extensions)."""
    return {
        "id": str(thread.api_id),
        "title": thread.title,
        "userId": thread.user_id,
        "status": thread.status,
        "model": thread.model_option,
        "createdAt": serializers.DateTimeField().to_representation(thread.created_at),
        "updatedAt": serializers.DateTimeField().to_representation(thread.updated_at),
        "messages": [
            {
                "id": str(message.client_id),
                "role": message.role,
                "content": message.content,
                "status": message.status,
                "notice": message.notice,
                "createdAt": serializers.DateTimeField().to_representation(message.created_at),
                "supersededAt": (serializers.DateTimeField().to_representation(message.superseded_at)
                                 if message.superseded_at else None),
                "replaces": str(message.replaces) if message.replaces else None,
                **attachments_json(message),
                **({"afterReading": message.after_reading} if message.after_reading else {}),
                "toolCalls": [
                    {
                        "id": call.tool_use_id,
                        "name": call.name,
                        "input": call.input,
                        "result": call.result,
                        "isError": call.is_error,
                    }
                    for call in message.tool_calls.all()
                ],
            }
            for message in thread.messages.all()
        ],
        "summary": summary_json(thread),
        **conversation_extras(thread),
    }


def summary_json(thread) -> dict | None:
    """The summary in use (the newest), and where it ends among the (prefetched) messages."""
    summary = summary_of(thread)
    if summary is None:
        return None
    messages = list(thread.messages.all())
    before = [m for m in messages if m.seq < summary.through_seq]
    after = [m for m in messages if m.seq >= summary.through_seq and m.superseded_at is None]
    return {
        "content": summary.content,
        "createdAt": serializers.DateTimeField().to_representation(summary.created_at),
        "summarizedThrough": str(before[-1].client_id) if before else None,
        "firstMessageInFull": str(after[0].client_id) if after else None,
    }


def attachments_json(message) -> dict:
    """`attachments` on a message that has files (prefetched): absent otherwise,
    so a conversation without files reads as before (the /ai/ door's documents)."""
    files = [
        {"id": str(a.id), "name": a.name, "type": a.media_type, "size": a.size}
        for a in message.attachments.all()
    ]
    return {"attachments": files} if files else {}

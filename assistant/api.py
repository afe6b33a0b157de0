"""Chat and turn endpoints: thin views over assistant.chat and the selectors."""

import json
from uuid import UUID

from django.core.exceptions import ImproperlyConfigured
from django.core.validators import RegexValidator
from django.http import StreamingHttpResponse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import renderers, serializers, status
from rest_framework.response import Response
from sse_starlette.event import ServerSentEvent

from assistant import chat, progress, selectors
from assistant.models import Turn
from config.api_errors import ApiError, bad_request, conflict, not_found
from config.openapi import errors
from config.serializers import StrictCharField, StrictSerializer, StrictUUIDField, parse_uuid
from conversations.api import BUSY
from conversations.models import Message
from conversations.selectors import ConversationNotFound
from conversations.services import ConversationBusy
from credits.services import CreditsExhausted, MemberCapReached
from organizations.api import ORGANIZATION_PARAMETER, MemberAPIView

FULL = "This conversation is full: start a new conversation to go on."


# Whitespace as str.isspace() has it, spelled out: regex engines disagree on
# what `\s` covers (Python's includes U+001C–U+001F and U+0085, ECMAScript's
# U+FEFF), and a client must refuse exactly what the server refuses.
WHITESPACE = r"\t\n\u000b\f\r \u001c-\u001f\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
NOT_BLANK_WITHOUT_NUL = rf"^[{WHITESPACE}]*[^{WHITESPACE}\u0000][^\u0000]*$"


class ChatRequestSerializer(StrictSerializer):
    # At least one character that is not whitespace, and no NUL (which the
    # database can't store). The pattern is the check itself, so the schema says
    # exactly what is refused; it runs in linear time (its parts don't overlap).
    message = StrictCharField(
        max_length=100_000, trim_whitespace=False,
        validators=[RegexValidator(NOT_BLANK_WITHOUT_NUL, message="The message is empty.")],
    )
    conversationId = StrictUUIDField(  # noqa: N815
        required=False, allow_null=True, help_text="Omitted or null: a new conversation is created."
    )


ChatResponse = inline_serializer("ChatAccepted", {
    "conversationId": serializers.UUIDField(), "turnId": serializers.UUIDField(), "messageId": serializers.UUIDField(),
})


class ChatView(MemberAPIView):
    throttle_scopes = {"POST": "chat"}

    @extend_schema(
        operation_id="chat", parameters=[ORGANIZATION_PARAMETER], request=ChatRequestSerializer,
        responses={202: ChatResponse},
        extensions=errors(
            "credits_exhausted", "member_cap_reached", "not_found", "conversation_busy", "conversation_full",
            "queue_unavailable", "model_unavailable",
        ),
    )
    def post(self, request):
        serializer = ChatRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            submitted = chat.chat_submit(
                self.member, message=serializer.validated_data["message"],
                conversation_id=serializer.validated_data.get("conversationId"),
            )
        except ConversationNotFound:
            raise not_found("No such conversation.") from None
        except ConversationBusy:
            raise conflict("conversation_busy", BUSY) from None
        except chat.ConversationFull:
            raise conflict("conversation_full", FULL) from None
        except MemberCapReached:
            raise ApiError(status_code=status.HTTP_402_PAYMENT_REQUIRED, code="member_cap_reached",
                           detail="You have reached your monthly limit in this organization.") from None
        except CreditsExhausted:
            raise ApiError(status_code=status.HTTP_402_PAYMENT_REQUIRED, code="credits_exhausted",
                           detail="Your organization has used its credits for this month.") from None
        except chat.QueueUnavailable:
            raise ApiError(status_code=status.HTTP_503_SERVICE_UNAVAILABLE, code="queue_unavailable",
                           detail="The assistant is not available right now; your message was not sent. "
                           "Please try again.") from None
        except ImproperlyConfigured:
            raise ApiError(status_code=status.HTTP_503_SERVICE_UNAVAILABLE, code="model_unavailable",
                           detail="No model is available right now.") from None
        return Response(
            {"conversationId": str(submitted.thread_id), "turnId": str(submitted.turn_id),
             "messageId": str(submitted.message_id)},
            status=status.HTTP_202_ACCEPTED,
        )


def parse_turn_id(raw: str) -> UUID:
    try:
        return parse_uuid(raw)
    except ValueError:
        raise bad_request("invalid_id", "The turn id must be a UUID.", {"id": ["Must be a UUID."]}) from None


TurnResponse = inline_serializer("TurnStatus", {
    "id": serializers.UUIDField(),
    "conversationId": serializers.UUIDField(allow_null=True, help_text="Null once the conversation is deleted."),
    "status": serializers.ChoiceField(choices=Turn.Status.choices),
    "failureKind": serializers.ChoiceField(choices=Turn.FailureKind.choices, allow_null=True),
    "steps": serializers.IntegerField(),
    "messageIds": serializers.ListField(child=serializers.UUIDField()),
    "costMicros": serializers.IntegerField(), "reservedMicros": serializers.IntegerField(),
})


class TurnView(MemberAPIView):
    @extend_schema(
        operation_id="turn_get", parameters=[ORGANIZATION_PARAMETER], responses=TurnResponse,
        extensions=errors("not_found"),
    )
    def get(self, request, turn_id: str):
        turn = turn_or_404(self.member, turn_id)
        message_ids = Message.objects.filter(turn_id=turn.id).order_by("seq").values_list("client_id", flat=True)
        return Response({
            "id": str(turn.id), "conversationId": str(turn.thread_id) if turn.thread_id else None,
            "status": turn.status, "failureKind": turn.failure_kind or None, "steps": turn.steps,
            "messageIds": [str(i) for i in message_ids], "costMicros": turn.cost_micros,
            "reservedMicros": turn.reserved_micros,
        })


def turn_or_404(member, raw_id: str):
    try:
        return selectors.turn_get_for_member(member, parse_turn_id(raw_id))
    except selectors.TurnNotFound:
        raise not_found("No such turn.") from None


class EventStreamRenderer(renderers.BaseRenderer):
    """Lets clients ask for text/event-stream; errors still go out as JSON text."""

    media_type = "text/event-stream"
    format = "sse"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return json.dumps(data).encode()


class TurnEventsView(MemberAPIView):
    renderer_classes = [renderers.JSONRenderer, EventStreamRenderer]

    @extend_schema(
        operation_id="turn_events", parameters=[ORGANIZATION_PARAMETER],
        responses={(200, "text/event-stream"): str}, extensions=errors("not_found"),
        description="Server-Sent Events of the turn's progress (`text`, `tool_call_started`, `tool_call_finished`, "
        "`card_proposed`, `turn_ended`); `Last-Event-ID` resumes. The stream stays open until the turn ends.",
    )
    def get(self, request, turn_id: str):
        turn = turn_or_404(self.member, turn_id)
        response = StreamingHttpResponse(sse_body(turn), content_type="text/event-stream")
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"
        return response


def sse_body(turn):
    for number, item in enumerate(progress.stream_turn(turn)):
        if item is None:
            yield ServerSentEvent(comment="keep-alive").encode()
        else:
            name, data = item
            yield ServerSentEvent(data=json.dumps(data, ensure_ascii=False), event=name, id=str(number)).encode()

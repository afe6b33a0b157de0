"""Chat and turn endpoints: thin views over assistant.chat and the selectors."""

import json
from uuid import UUID

from django.core.exceptions import ImproperlyConfigured
from django.http import StreamingHttpResponse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import renderers, serializers, status
from rest_framework.response import Response
from sse_starlette.event import ServerSentEvent

from assistant import chat, progress, selectors
from config.api_errors import ApiError, bad_request, conflict, not_found
from config.serializers import StrictCharField, StrictSerializer, StrictUUIDField, parse_uuid
from conversations.api import BUSY
from conversations.models import Message
from conversations.selectors import ConversationNotFound
from conversations.services import ConversationBusy
from credits.services import CreditsExhausted, MemberCapReached
from organizations.api import ORGANIZATION_PARAMETER, MemberAPIView

FULL = "This conversation is full: start a new conversation to go on."


class ChatRequestSerializer(StrictSerializer):
    message = StrictCharField(max_length=100_000, trim_whitespace=False)
    conversationId = StrictUUIDField(required=False, allow_null=True)  # noqa: N815

    def validate_message(self, value):
        if not value.strip():
            raise serializers.ValidationError("The message is empty.")
        return value


ChatResponse = inline_serializer("ChatAccepted", {
    "conversationId": serializers.UUIDField(), "turnId": serializers.UUIDField(), "messageId": serializers.UUIDField(),
})


class ChatView(MemberAPIView):
    throttle_scopes = {"POST": "chat"}

    @extend_schema(parameters=[ORGANIZATION_PARAMETER], request=ChatRequestSerializer, responses={202: ChatResponse})
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
    "id": serializers.UUIDField(), "conversationId": serializers.UUIDField(), "status": serializers.CharField(),
    "failureKind": serializers.CharField(allow_null=True), "steps": serializers.IntegerField(),
    "messageIds": serializers.ListField(child=serializers.UUIDField()),
    "costMicros": serializers.IntegerField(), "reservedMicros": serializers.IntegerField(),
})


class TurnView(MemberAPIView):
    @extend_schema(parameters=[ORGANIZATION_PARAMETER], responses=TurnResponse)
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

    @extend_schema(parameters=[ORGANIZATION_PARAMETER], responses={(200, "text/event-stream"): str})
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

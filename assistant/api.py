"""Chat and turn endpoints: thin views over assistant.chat and the selectors."""

import json
from uuid import UUID

from django.core.exceptions import ImproperlyConfigured
from django.http import StreamingHttpResponse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import renderers, serializers, status
from rest_framework.response import Response
from sse_starlette.event import ServerSentEvent

from assistant import chat, progress, selectors, turns
from config.api_errors import ApiError, bad_request, conflict, not_found
from config.serializers import StrictCharField, StrictSerializer, StrictUUIDField, parse_uuid
from conversations.api import BUSY, parse_conversation_id
from conversations.models import Message
from conversations.selectors import ConversationNotFound
from conversations.services import ConversationBusy
from credits.services import CreditsExhausted
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
        return submitted_or_error(lambda: chat.chat_submit(
            self.member, message=serializer.validated_data["message"],
            conversation_id=serializer.validated_data.get("conversationId"),
        ))


class EditRequestSerializer(StrictSerializer):
    message = StrictCharField(max_length=100_000, trim_whitespace=False)

    validate_message = ChatRequestSerializer.validate_message


VERSIONS = ("The replaced messages stay in the StoredConversation with `supersededAt` set (a previous version, "
            "never sent to the model again); the new version follows them.")


class RegenerateView(MemberAPIView):
    throttle_scopes = {"POST": "chat"}

    @extend_schema(parameters=[ORGANIZATION_PARAMETER], request=None, responses={202: ChatResponse},
                   description="A new reply to the last user message, through the normal submission (credits, "
                   "bounds, cards). " + VERSIONS)
    def post(self, request, conversation_id: str):
        thread_id = parse_conversation_id(conversation_id)
        return submitted_or_error(lambda: chat.chat_regenerate(self.member, conversation_id=thread_id))


class EditView(MemberAPIView):
    throttle_scopes = {"POST": "chat"}

    @extend_schema(parameters=[ORGANIZATION_PARAMETER], request=EditRequestSerializer, responses={202: ChatResponse},
                   description="The last user message edited and resent (the new one's `replaces` names the "
                   "old one). " + VERSIONS)
    def post(self, request, conversation_id: str):
        thread_id = parse_conversation_id(conversation_id)
        serializer = EditRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        return submitted_or_error(lambda: chat.chat_edit(
            self.member, conversation_id=thread_id, message=serializer.validated_data["message"]))


def submitted_or_error(submit) -> Response:
    """Runs a submission (chat, regenerate, edit) and maps its refusals to the one error shape."""
    try:
        submitted = submit()
    except chat.NothingToRedo:
        raise conflict("nothing_to_redo", "This conversation has no message of yours to answer again.") from None
    except ConversationNotFound:
        raise not_found("No such conversation.") from None
    except ConversationBusy:
        raise conflict("conversation_busy", BUSY) from None
    except chat.ConversationFull:
        raise conflict("conversation_full", FULL) from None
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


CancelResponse = inline_serializer("TurnCancel", {
    "id": serializers.UUIDField(),
    "status": serializers.ChoiceField(choices=["cancelled", "running"], help_text=(
        "`cancelled`: the turn was queued and is ended (no cost). `running`: its worker stops it at the next "
        "safe point, then the turn ends `cancelled` with the text so far and the credits actually spent.")),
})


class TurnCancelView(MemberAPIView):
    # Counted with the card clicks, not the messages: a Stop must not use up the person's sends.
    throttle_scopes = {"POST": "cards"}

    @extend_schema(parameters=[ORGANIZATION_PARAMETER], request=None,
                   responses={200: CancelResponse, 202: CancelResponse})
    def post(self, request, turn_id: str):
        parsed = parse_turn_id(turn_id)
        try:
            result = turns.turn_cancel(self.member, turn_id=parsed)
        except selectors.TurnNotFound:
            raise not_found("No such turn.") from None
        except turns.TurnEnded:
            raise conflict("turn_ended", "This reply has already ended.") from None
        code = status.HTTP_200_OK if result.status == "cancelled" else status.HTTP_202_ACCEPTED
        return Response({"id": str(result.turn_id), "status": result.status}, status=code)


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

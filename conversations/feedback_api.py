"""POST /api/messages/{id}/feedback: the person's 👍/👎 on a reply."""

from drf_spectacular.utils import inline_serializer
from rest_framework import serializers
from rest_framework.response import Response

from assistant_engine.foundation.api_errors import bad_request, not_found
from assistant_engine.foundation.openapi import errors, extend_schema
from assistant_engine.foundation.serializers import StrictCharField, StrictSerializer, parse_uuid
from assistant_engine.organizations.api import ORGANIZATION_PARAMETER, MemberAPIView
from conversations.feedback import COMMENT_MAX_CHARS, ReplyNotFound, feedback_give, feedback_json
from conversations.models import MessageFeedback


class FeedbackSerializer(StrictSerializer):
    rating = serializers.ChoiceField(choices=MessageFeedback.Rating.values)
    comment = StrictCharField(required=False, allow_blank=True, max_length=COMMENT_MAX_CHARS,
                              help_text="An optional word; sent again, it replaces the one before.")


FeedbackResponse = inline_serializer("Feedback", {
    "messageId": serializers.UUIDField(), "rating": serializers.ChoiceField(choices=MessageFeedback.Rating.values),
    "comment": serializers.CharField(allow_blank=True), "createdAt": serializers.DateTimeField(),
    "updatedAt": serializers.DateTimeField(),
})


class MessageFeedbackView(MemberAPIView):
    throttle_scopes = {"POST": "uploads"}

    @extend_schema(
        operation_id="message_feedback", parameters=[ORGANIZATION_PARAMETER], request=FeedbackSerializer,
        responses={200: FeedbackResponse}, extensions=errors("not_found"),
        description="👍 (`up`) or 👎 (`down`) on a reply of the assistant in one of the person's conversations, "
        "with an optional word. Idempotent: sent again, it replaces the feedback before. Any other message is "
        "404 `not_found`.",
    )
    def post(self, request, message_id: str):
        try:
            parsed = parse_uuid(message_id)
        except ValueError:
            raise bad_request("invalid_id", "The message id must be a UUID.", {"id": ["Must be a UUID."]}) from None
        serializer = FeedbackSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            feedback = feedback_give(self.member, message_id=parsed, **serializer.validated_data)
        except ReplyNotFound:
            raise not_found("No such reply among yours.") from None
        return Response(feedback_json(feedback))

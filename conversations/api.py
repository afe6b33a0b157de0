"""Conversation endpoints: thin views over the services and selectors."""

from uuid import UUID

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response

from config.api_errors import ApiError, bad_request, conflict, not_found
from config.serializers import StrictCharField, StrictSerializer, parse_uuid
from conversations import selectors, services
from conversations.serializers import (
    ConversationSerializer,
    ConversationSummarySerializer,
    UpsertResultSerializer,
    conversation_to_json,
    too_many_messages,
)
from organizations.api import ORGANIZATION_PARAMETER, MemberAPIView

BUSY = "A reply is being written in this conversation; try again when it has finished."


def parse_conversation_id(raw: str) -> UUID:
    try:
        return parse_uuid(raw)
    except ValueError:
        raise bad_request("invalid_id", "The conversation id must be a UUID.", {"id": ["Must be a UUID."]}) from None


class RenameSerializer(StrictSerializer):
    title = StrictCharField(max_length=services.RENAME_MAX_CHARS)  # blank refused by CharField

    def validate_title(self, value):
        return value.strip()


class ConversationPagination(PageNumberPagination):
    page_size_query_param = "pageSize"
    max_page_size = 200

    def get_page_size(self, request):
        # Read per request, so the setting can change without a restart of this class.
        self.page_size = settings.CONVERSATIONS_PAGE_SIZE
        return super().get_page_size(request)


SEARCH_PARAMETER = OpenApiParameter(
    "q", str, description="Only conversations whose title or messages hold these words "
    f"(at most {selectors.SEARCH_MAX_CHARS} characters).")


class ConversationListView(MemberAPIView):
    @extend_schema(parameters=[ORGANIZATION_PARAMETER, SEARCH_PARAMETER],
                   responses=ConversationSummarySerializer(many=True))
    def get(self, request):
        query = request.query_params.get("q", "").strip()
        if len(query) > selectors.SEARCH_MAX_CHARS:
            raise bad_request("query_too_long", f"The search is limited to {selectors.SEARCH_MAX_CHARS} characters.",
                              {"q": ["Too long."]})
        threads = selectors.thread_search(self.member, query) if query else selectors.thread_list(self.member)
        paginator = ConversationPagination()
        page = paginator.paginate_queryset(threads, request, view=self)
        return paginator.get_paginated_response(ConversationSummarySerializer(page, many=True).data)


class ConversationDetailView(MemberAPIView):
    throttle_scopes = {"PUT": "uploads"}

    @extend_schema(parameters=[ORGANIZATION_PARAMETER], responses=ConversationSerializer)
    def get(self, request, conversation_id: str):
        thread_id = parse_conversation_id(conversation_id)
        try:
            thread = selectors.thread_with_messages(self.member, thread_id)
        except selectors.ConversationNotFound:
            raise not_found("No such conversation.") from None
        return Response(conversation_to_json(thread))

    @extend_schema(
        parameters=[ORGANIZATION_PARAMETER], request=ConversationSerializer, responses=UpsertResultSerializer
    )
    def put(self, request, conversation_id: str):
        thread_id = parse_conversation_id(conversation_id)
        serializer = ConversationSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = conversation_data(serializer.validated_data)
        if data.id != thread_id:
            raise bad_request("id_mismatch", "The body's id differs from the URL's.", {"id": ["Must match the URL."]})
        try:
            outcome = services.conversation_upsert(self.member, data=data)
        except selectors.ConversationNotFound:
            raise not_found("No such conversation.") from None
        except services.ConversationBusy:
            raise conflict("conversation_busy", BUSY) from None
        except services.TooManyMessages:
            raise too_many_messages() from None
        except services.ConversationTooLarge:
            raise ApiError(
                status_code=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE, code="conversation_too_large",
                detail=f"A conversation may store at most {settings.CONVERSATION_MAX_BYTES} bytes.",
            ) from None
        thread = selectors.thread_with_messages(self.member, thread_id)
        return Response({"applied": outcome.applied, "conversation": conversation_to_json(thread)})

    @extend_schema(parameters=[ORGANIZATION_PARAMETER], request=RenameSerializer,
                   responses=ConversationSummarySerializer, description="Rename: only `title` may be sent.")
    def patch(self, request, conversation_id: str):
        thread_id = parse_conversation_id(conversation_id)
        serializer = RenameSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            thread = services.thread_rename(self.member, thread_id=thread_id, title=serializer.validated_data["title"])
        except selectors.ConversationNotFound:
            raise not_found("No such conversation.") from None
        return Response(ConversationSummarySerializer(thread).data)

    @extend_schema(parameters=[ORGANIZATION_PARAMETER], responses={204: None})
    def delete(self, request, conversation_id: str):
        thread_id = parse_conversation_id(conversation_id)
        try:
            services.thread_delete(self.member, thread_id=thread_id)
        except selectors.ConversationNotFound:
            raise not_found("No such conversation.") from None
        except services.ConversationBusy:
            raise conflict("conversation_busy", BUSY) from None
        return Response(status=status.HTTP_204_NO_CONTENT)


def conversation_data(validated: dict) -> services.ConversationData:
    return services.ConversationData(
        id=validated["id"],
        title=validated.get("title"),
        created_at=validated["createdAt"],
        updated_at=validated["updatedAt"],
        messages=[
            services.MessageData(
                id=message["id"],
                role=message["role"],
                content=message["content"],
                created_at=message["createdAt"],
                tool_calls=[
                    services.ToolCallData(
                        tool_use_id=call["id"],
                        name=call["name"],
                        input=call["input"],
                        result=call["result"],
                        is_error=call["isError"],
                    )
                    for call in message["toolCalls"]
                ],
            )
            for message in validated["messages"]
        ],
    )



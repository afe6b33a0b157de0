"""Conversation endpoints: thin views over the services and selectors."""

import re
from uuid import UUID

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers, status
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from assistant_engine.foundation.api_errors import ApiError, bad_request, conflict, not_found, unprocessable
from assistant_engine.foundation.openapi import errors, extend_schema
from assistant_engine.foundation.serializers import StrictCharField, StrictSerializer, parse_uuid
from assistant_engine.organizations.api import ORGANIZATION_PARAMETER, MemberAPIView
from conversations import selectors, services, thread_update
from conversations.extensions import model_choices
from conversations.serializers import (
    ChlovaConversationSerializer,
    ConversationSerializer,
    ConversationSummarySerializer,
    UpsertResultSerializer,
    conversation_to_json,
    too_many_messages,
)
from conversations.titles import collapse_whitespace

BUSY = "A reply is being written in this conversation; try again when it has finished."


def parse_conversation_id(raw: str) -> UUID:
    try:
        return parse_uuid(raw)
    except ValueError:
        raise bad_request("invalid_id", "The conversation id must be a UUID.", {"id": ["Must be a UUID."]}) from None


def model_not_allowed() -> ApiError:
    return unprocessable("model_not_allowed", "Your organization does not allow this model.",
                         {"model": ["Not among the organization's models."]})


class ModelField(serializers.ChoiceField):
    """A conversation's model: the enum documents the options of this
    deployment (read when the serializer is built, so it follows the
    settings); another text is 400 `invalid`, as the enum says. One of them
    that the organization does not allow is 422 `model_not_allowed` (from the
    service): the enum can't be each organization's, the document is the
    deployment's."""

    def __init__(self, **kwargs):
        super().__init__(choices=[""], required=False, allow_blank=True, **kwargs)

    def bind(self, field_name, parent):
        super().bind(field_name, parent)
        self.choices = model_choices()


class ConversationPatchSerializer(StrictSerializer):
    title = StrictCharField(max_length=thread_update.RENAME_MAX_CHARS, required=False)  # blank refused by CharField
    model = ModelField(help_text=(
        "A model option the organization allows (GET /api/me/models); \"\" returns to the organization's. "
        "One the organization does not allow is 422 `model_not_allowed`; a text not in the enum, 400 `invalid`."))

    def validate_title(self, value):
        # Any kind of whitespace only (tabs, line separators…) is blank too.
        if not collapse_whitespace(value):
            raise serializers.ValidationError("The title is empty.")
        return value.strip()


class ConversationPagination(PageNumberPagination):
    """`page` (from 1) and `pageSize` (1 to 200), refused with 400 `invalid_page`
    when they are not such numbers, rather than silently replaced by defaults."""

    page_size_query_param = "pageSize"
    max_page_size = 200

    def paginate_queryset(self, queryset, request, view=None):
        raw_page = request.query_params.get(self.page_query_param)
        if raw_page is not None:
            query_number(raw_page, name=self.page_query_param, maximum=None)
        return super().paginate_queryset(queryset, request, view)

    def get_page_size(self, request):
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            # Read per request, so the setting can change without a restart of this class.
            return settings.CONVERSATIONS_PAGE_SIZE
        return query_number(raw, name=self.page_size_query_param, maximum=self.max_page_size)

    def get_schema_operation_parameters(self, view):
        page, page_size = super().get_schema_operation_parameters(view)
        page["schema"]["minimum"] = 1
        page_size["schema"].update(minimum=1, maximum=self.max_page_size)
        return [page, page_size]

    def get_paginated_response_schema(self, schema):
        described = super().get_paginated_response_schema(schema)
        described["properties"]["count"].update(nullable=True, description="Null for a search (`q`): follow `next`.")
        return described


class SearchPagination(ConversationPagination):
    """The pages of a search: the page's rows and one more to know whether a
    next page exists. No COUNT: it would run the whole search a second time
    for every page, so `count` is null and `next` says whether there is more."""

    def paginate_queryset(self, queryset, request, view=None):
        raw_page = request.query_params.get(self.page_query_param)
        number = 1 if raw_page is None else query_number(raw_page, name=self.page_query_param, maximum=None)
        size = self.get_page_size(request)
        start = (number - 1) * size
        if start + size + 1 >= 2**63:  # past what a database offset holds (a 500 on SQLite): no such page
            raise not_found("Invalid page.")
        rows = list(queryset[start:start + size + 1])
        if not rows and number > 1:
            raise not_found("Invalid page.")
        self.request, self.number, self.has_more = request, number, len(rows) > size
        return rows[:size]

    def get_paginated_response(self, data):
        url = self.request.build_absolute_uri()
        nxt = replace_query_param(url, self.page_query_param, self.number + 1) if self.has_more else None
        previous = None
        if self.number > 1:
            previous = replace_query_param(url, self.page_query_param, self.number - 1)
        return Response({"count": None, "next": nxt, "previous": previous, "results": data})


def query_number(raw: str, *, name: str, maximum: int | None) -> int:
    """A whole number from 1 (to `maximum`) written in ASCII digits, or 400."""
    # A page past the last one is the paginator's 404, however large its number.
    number = int(raw) if re.fullmatch(r"[0-9]{1,4000}", raw) else 0
    if number < 1 or (maximum is not None and number > maximum):
        bound = f"from 1 to {maximum}" if maximum else "from 1"
        raise bad_request("invalid_page", f"{name} must be a whole number {bound}.", {name: [f"A number {bound}."]})
    return number


SEARCH_PARAMETER = OpenApiParameter(
    "q", {"type": "string", "maxLength": selectors.SEARCH_MAX_CHARS},
    description="Only conversations whose title or messages hold these words "
    f"(at most {selectors.SEARCH_MAX_CHARS} characters).")


# CHLOVA's list is one array, not pages: its most recent conversations up to the largest page.
CHLOVA_LIST_MAX = ConversationPagination.max_page_size


def chlova_list_asked(request) -> bool:
    """The deployment serves CHLOVA's client (ASSISTANT_CONVERSATIONS_LIST=chlova)
    and the request asks for no page nor search, as that client's never does."""
    asked = ("page", ConversationPagination.page_size_query_param, "q")
    return settings.ASSISTANT_CONVERSATIONS_LIST == "chlova" and not any(
        name in request.query_params for name in asked)


class ConversationListView(MemberAPIView):
    pagination_class = ConversationPagination

    @extend_schema(
        operation_id="conversations_list", parameters=[ORGANIZATION_PARAMETER, SEARCH_PARAMETER],
        responses=ConversationSummarySerializer(many=True),
        extensions=errors("invalid_page", "not_found", "query_too_long", "invalid_query"),
        description="The person's conversations, most recent first. A page past the last one is 404 `not_found`. "
        "A search (`q`) has no `count` (null): `next` says whether more pages follow. A deployment that serves "
        "CHLOVA's client (`ASSISTANT_CONVERSATIONS_LIST=chlova`) answers a request without `page`, `pageSize` "
        f"and `q` with CHLOVA's form instead: a bare array of `{{id, title, createdAt, updatedAt}}`, the "
        f"{CHLOVA_LIST_MAX} most recent.",
    )
    def get(self, request):
        if chlova_list_asked(request):
            threads = selectors.thread_list(self.member)[:CHLOVA_LIST_MAX]
            return Response(ChlovaConversationSerializer(threads, many=True).data)
        query = request.query_params.get("q", "").strip()
        if len(query) > selectors.SEARCH_MAX_CHARS:
            raise bad_request("query_too_long", f"The search is limited to {selectors.SEARCH_MAX_CHARS} characters.",
                              {"q": ["Too long."]})
        if "\x00" in query:  # PostgreSQL text can't hold it: refused here, not a 500 there
            raise bad_request("invalid_query", "The search can't contain a NUL character.", {"q": ["NUL character."]})
        if query:
            threads, paginator = selectors.thread_search(self.member, query), SearchPagination()
        else:
            threads, paginator = selectors.thread_list(self.member), self.pagination_class()
        page = paginator.paginate_queryset(threads, request, view=self)
        return paginator.get_paginated_response(ConversationSummarySerializer(page, many=True).data)


class ConversationDetailView(MemberAPIView):
    throttle_scopes = {"PUT": "uploads"}

    @extend_schema(
        operation_id="conversation_get", parameters=[ORGANIZATION_PARAMETER], responses=ConversationSerializer,
        extensions=errors("not_found"),
    )
    def get(self, request, conversation_id: str):
        thread_id = parse_conversation_id(conversation_id)
        try:
            thread = selectors.thread_with_messages(self.member, thread_id)
        except selectors.ConversationNotFound:
            raise not_found("No such conversation.") from None
        return Response(conversation_to_json(thread))

    @extend_schema(
        operation_id="conversation_put", parameters=[ORGANIZATION_PARAMETER], request=ConversationSerializer,
        responses=UpsertResultSerializer,
        extensions=errors(
            "too_many_messages", "not_found", "conversation_busy", "conversation_too_large",
        ),
        description="Full upsert; last write wins by `updatedAt` (`applied` says whether this one did). "
        "The URL names the conversation: the body's `id` (read-only) may be left out, and is ignored. "
        "Ids are each person's own: an id another person's conversation has names a new one of yours "
        "(nothing tells whether it exists elsewhere, and nobody can take an id before you).",
    )
    def put(self, request, conversation_id: str):
        thread_id = parse_conversation_id(conversation_id)
        serializer = ConversationSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        outcome = upsert_or_error(self.member, conversation_data(thread_id, serializer.validated_data))
        thread = selectors.thread_with_messages(self.member, thread_id)
        return Response({"applied": outcome.applied, "conversation": conversation_to_json(thread)})

    @extend_schema(operation_id="conversation_rename", parameters=[ORGANIZATION_PARAMETER],
                   request=ConversationPatchSerializer, responses=ConversationSummarySerializer,
                   extensions=errors("invalid", "invalid_id", "not_found", "model_not_allowed"),
                   description="Rename (`title`), choose the conversation's model (`model`), or both; "
                   "an empty body changes nothing and answers the summary.")
    def patch(self, request, conversation_id: str):
        thread_id = parse_conversation_id(conversation_id)
        serializer = ConversationPatchSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            thread = thread_update.thread_update(self.member, thread_id=thread_id, **serializer.validated_data)
        except selectors.ConversationNotFound:
            raise not_found("No such conversation.") from None
        except thread_update.ModelNotAllowed:
            raise model_not_allowed() from None
        return Response(ConversationSummarySerializer(thread).data)

    @extend_schema(
        operation_id="conversation_delete", parameters=[ORGANIZATION_PARAMETER], responses={204: None},
        extensions=errors("not_found", "conversation_busy"),
    )
    def delete(self, request, conversation_id: str):
        delete_or_error(self.member, parse_conversation_id(conversation_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


def conversation_data(thread_id: UUID, validated: dict) -> services.ConversationData:
    return services.ConversationData(
        id=thread_id,
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


def delete_or_error(member, thread_id) -> None:
    """The delete, its refusals mapped to the one error shape (both doors)."""
    try:
        services.thread_delete(member, thread_id=thread_id)
    except selectors.ConversationNotFound:
        raise not_found("No such conversation.") from None
    except services.ConversationBusy:
        raise conflict("conversation_busy", BUSY) from None


def upsert_or_error(member, data) -> services.UpsertOutcome:
    """The upsert, its refusals mapped to the one error shape (the /api/ and
    the /ai/ doors share it)."""
    try:
        return services.conversation_upsert(member, data=data)
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

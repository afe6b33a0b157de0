"""GET /api/conversations/{id}/export?format=md|json: one conversation as a download."""

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import JSONRenderer

from assistant_engine.foundation.api_errors import bad_request, not_found
from assistant_engine.foundation.openapi import errors, extend_schema
from assistant_engine.organizations.api import ORGANIZATION_PARAMETER, MemberAPIView
from conversations import selectors
from conversations.api import parse_conversation_id
from conversations.export_one import FORMATS, export_body, export_filename
from conversations.serializers import conversation_to_json


class IgnoreFormatParameter(DefaultContentNegotiation):
    """`format` here names the file's format, not DRF's renderer (its errors stay JSON)."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return JSONRenderer(), JSONRenderer.media_type


FORMAT_PARAMETER = OpenApiParameter(
    "format", {"type": "string", "enum": list(FORMATS)}, required=False,
    description="`md` (Markdown, the default) or `json` (the conversation as GET shows it). "
    "Another value is 400 `invalid_format`.")


class ConversationExportView(MemberAPIView):
    content_negotiation_class = IgnoreFormatParameter

    @extend_schema(
        operation_id="conversation_export", parameters=[ORGANIZATION_PARAMETER, FORMAT_PARAMETER],
        responses={
            (200, "text/markdown"): OpenApiResponse(OpenApiTypes.STR, description="`format=md`: an attachment."),
            (200, "application/json"): OpenApiResponse(OpenApiTypes.OBJECT, description="`format=json`: an "
                                                       "attachment, the conversation as GET shows it."),
        },
        extensions=errors("not_found", "invalid_format"),
        description="One conversation of the person as a file. Markdown holds what was said (current versions, "
        "tool calls by name); JSON holds everything GET /api/conversations/{id} shows.",
    )
    def get(self, request, conversation_id: str):
        thread_id = parse_conversation_id(conversation_id)
        fmt = request.query_params.get("format", "md")
        if fmt not in FORMATS:
            raise bad_request("invalid_format", "The format is `md` or `json`.", {"format": ["md or json."]})
        try:
            document = conversation_to_json(selectors.thread_with_messages(self.member, thread_id))
        except selectors.ConversationNotFound:
            raise not_found("No such conversation.") from None
        response = HttpResponse(export_body(document, fmt), content_type=FORMATS[fmt][0])
        response["Content-Disposition"] = f'attachment; filename="{export_filename(document, fmt)}"'
        response["Cache-Control"] = "no-store"
        return response

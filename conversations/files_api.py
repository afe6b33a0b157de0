"""File endpoints: upload (multipart), metadata, content. Thin views over conversations.files.

The content is served so that it can never run as a page: images with their
own (inert) type, everything else as an attachment in text/plain or
application/pdf, always with `X-Content-Type-Options: nosniff` and a
sandboxing Content-Security-Policy.
"""

from urllib.parse import quote

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response

from assistant_engine.foundation.api_errors import ApiError, bad_request, not_found
from assistant_engine.foundation.middleware import file_too_large_detail
from assistant_engine.foundation.openapi import errors, extend_schema
from assistant_engine.foundation.serializers import parse_uuid
from assistant_engine.organizations.api import ORGANIZATION_PARAMETER, MemberAPIView
from conversations import files, sniff
from conversations.models import Attachment

FileResponse = inline_serializer("File", {
    "id": serializers.UUIDField(),
    "name": serializers.CharField(help_text="As uploaded (its last path part); never used to judge the type."),
    "type": serializers.ChoiceField(choices=sorted([sniff.TEXT, sniff.PDF, *sniff.IMAGES]),
                                    help_text="Judged from the content."),
    "size": serializers.IntegerField(help_text="Bytes."),
    "attached": serializers.BooleanField(help_text="False until a message (POST /api/chat `attachments`) takes it."),
})

UploadRequest = inline_serializer("FileUpload", {
    "file": serializers.FileField(help_text="Text (UTF-8: plain, Markdown, CSV), PDF, PNG, JPEG, GIF or WebP; "
                                  "HTML and SVG are refused."),
})


def parse_file_id(raw: str):
    try:
        return parse_uuid(raw)
    except ValueError:
        raise bad_request("invalid_id", "The file id must be a UUID.", {"id": ["Must be a UUID."]}) from None


def file_or_404(member, raw_id: str, *, with_data: bool = False) -> Attachment:
    try:
        return files.file_get_for_member(member, parse_file_id(raw_id), with_data=with_data)
    except files.FileNotFound:
        raise not_found("No such file.") from None


class FileUploadView(MemberAPIView):
    parser_classes = [MultiPartParser]
    throttle_scopes = {"POST": "uploads"}

    @extend_schema(
        operation_id="file_upload", parameters=[ORGANIZATION_PARAMETER],
        request={"multipart/form-data": UploadRequest}, responses={201: FileResponse},
        extensions=errors("file_too_large", "empty_file", "unsupported_file_type", "unreadable_pdf",
                          "too_many_pages", "invalid"),
        description="Stores one file of the person (one `file` part), to attach to a message "
        "(POST /api/chat `attachments`). An upload no message takes is deleted after a day.",
    )
    def post(self, request):
        upload = request.FILES.get("file")
        if upload is None or len(request.FILES) != 1:
            raise bad_request("invalid", "Send one file, in a multipart part named `file`.",
                              {"file": ["One file is required."]})
        if upload.size > settings.FILE_MAX_BYTES:
            raise too_large()
        try:
            attachment = files.file_upload(self.member, name=upload.name or "", data=upload.read())
        except files.FileTooLarge:
            raise too_large() from None
        except files.FileRefused as refusal:
            raise bad_request(refusal.code, refusal.detail) from None
        return Response(files.file_json(attachment), status=status.HTTP_201_CREATED)


def too_large() -> ApiError:
    return ApiError(status_code=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE, code="file_too_large",
                    detail=file_too_large_detail())


class FileView(MemberAPIView):
    @extend_schema(operation_id="file_get", parameters=[ORGANIZATION_PARAMETER], responses=FileResponse,
                   extensions=errors("not_found"))
    def get(self, request, file_id: str):
        return Response(files.file_json(file_or_404(self.member, file_id)))


CONTENT_TYPES = ("text/plain", sniff.PDF, *sorted(sniff.IMAGES))


class FileContentView(MemberAPIView):
    # Content negotiation stays JSON's (for the errors): an <img> or a download
    # accepts */*, and the bytes go out as an HttpResponse of their own type.
    @extend_schema(operation_id="file_content", parameters=[ORGANIZATION_PARAMETER],
                   responses={(200, media_type): OpenApiTypes.BINARY for media_type in CONTENT_TYPES},
                   extensions=errors("not_found"),
                   description="The file's bytes: an image inline in its own type (a thumbnail on the message), "
                   "anything else as an attachment (text as text/plain). Never HTML.")
    def get(self, request, file_id: str):
        return content_response(file_or_404(self.member, file_id, with_data=True))


def content_response(attachment: Attachment) -> HttpResponse:
    inline = attachment.media_type in sniff.IMAGES
    media_type = attachment.media_type if attachment.media_type != sniff.TEXT else "text/plain; charset=utf-8"
    response = HttpResponse(bytes(attachment.data), content_type=media_type)
    disposition = "inline" if inline else "attachment"
    response["Content-Disposition"] = f"{disposition}; filename*=UTF-8''{quote(attachment.name)}"
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    response["Cache-Control"] = "private, max-age=3600"
    return response

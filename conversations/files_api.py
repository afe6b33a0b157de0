"""File endpoints: upload (multipart), metadata, content. Thin views over conversations.files.

The content is served so that it can never run as a page: images with their
own (inert) type, everything else as an attachment in text/plain or
application/pdf, always with `X-Content-Type-Options: nosniff` and a
sandboxing Content-Security-Policy.
"""

import logging
from urllib.parse import quote

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response

from assistant_engine.foundation.api_errors import ApiError, bad_request, not_found, unprocessable
from assistant_engine.foundation.broker_folders import ensure_broker_folders
from assistant_engine.foundation.middleware import file_too_large_detail
from assistant_engine.foundation.openapi import errors, extend_schema
from assistant_engine.foundation.serializers import parse_uuid
from assistant_engine.organizations.api import ORGANIZATION_PARAMETER, MemberAPIView
from conversations import files, sniff
from conversations.models import Attachment
from conversations.tasks import read_file_task

logger = logging.getLogger("conversations.files")

FileResponse = inline_serializer("File", {
    "id": serializers.UUIDField(),
    "name": serializers.CharField(help_text="As uploaded (its last path part); never used to judge the type."),
    "type": serializers.ChoiceField(choices=sorted([sniff.TEXT, sniff.PDF, *sniff.IMAGES]),
                                    help_text="Judged from the content."),
    "size": serializers.IntegerField(help_text="Bytes."),
    "attached": serializers.BooleanField(help_text="False until a message (POST /api/chat `attachments`) takes it."),
    "state": serializers.ChoiceField(choices=[state.value for state in Attachment.State], help_text=(
        "`reading` while a worker reads a PDF's text (GET this again), then `ready`, or `refused` (see `code`): "
        "a message takes only a `ready` file.")),
    "code": serializers.CharField(required=False, help_text="When `refused`: unreadable_pdf or too_many_pages."),
    "detail": serializers.CharField(required=False, help_text="When `refused`: why, in words."),
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
        extensions=errors("file_too_large", "empty_file", "unsupported_file_type", "unattached_files_limit",
                          "files_still_reading", "organization_files_full", "queue_unavailable", "invalid"),
        description="Stores one file of the person (one `file` part), to attach to a message "
        "(POST /api/chat `attachments`). A PDF comes back `reading`: a worker reads its text, and "
        "GET /api/files/{id} says when it is `ready` (or `refused`). An upload no message takes is deleted "
        "after a day.",
    )
    def post(self, request):
        uploads = request.FILES.getlist("file")
        if len(uploads) != 1 or len(request.FILES) != 1:  # a second part would be silently dropped
            raise bad_request("invalid", "Send one file, in a multipart part named `file`.",
                              {"file": ["One file is required."]})
        [upload] = uploads
        if upload.size > settings.FILE_MAX_BYTES:
            raise too_large()
        try:
            attachment = files.file_upload(self.member, name=upload.name or "", data=upload.read())
        except files.FileTooLarge:
            raise too_large() from None
        except files.FileRefused as refusal:
            raise unprocessable(refusal.code, refusal.detail) from None
        except files.StorageFull as full:
            raise ApiError(status_code=full.status, code=full.code, detail=full.detail) from None
        if attachment.state == Attachment.State.READING and not enqueue_read(attachment):
            raise ApiError(status_code=status.HTTP_503_SERVICE_UNAVAILABLE, code="queue_unavailable",
                           detail="Files can't be read right now; please try again.")
        return Response(files.file_json(attachment), status=status.HTTP_201_CREATED)


def enqueue_read(attachment: Attachment) -> bool:
    """Hand the PDF to a worker; when no broker takes it, the upload is undone."""
    try:
        ensure_broker_folders()
        read_file_task.apply_async(args=[str(attachment.id)], retry=True, retry_policy={
            "max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 0.5})  # the person waits
    except Exception:  # the broker's errors vary by transport: all mean "not queued"
        logger.warning("file_read_not_queued", extra={"file_id": str(attachment.id)})
        attachment.delete()
        return False
    return True


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
    response = HttpResponse(attachment.content(), content_type=media_type)
    disposition = "inline" if inline else "attachment"
    response["Content-Disposition"] = f"{disposition}; filename*=UTF-8''{quote(attachment.name)}"
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    response["Cache-Control"] = "private, max-age=3600"
    return response

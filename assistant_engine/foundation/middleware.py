import re

from django.conf import settings
from django.http import JsonResponse
from django.utils.cache import patch_cache_control

CONVERSATION_UPLOAD = re.compile(r"^/(api|ai)/conversations/[^/]+/?$")
FILE_UPLOAD = "/api/files"


def body_limit(request) -> int:
    """The largest body a request may carry. A conversation upload's follows
    what a conversation may store, whatever the general API limit."""
    if request.method == "PUT" and CONVERSATION_UPLOAD.match(request.path):
        return settings.CONVERSATION_MAX_BYTES + (
            settings.CONVERSATION_MAX_MESSAGES * settings.CONVERSATION_UPLOAD_FRAMING_BYTES
        )
    if is_file_upload(request):
        return settings.FILE_MAX_BYTES + settings.FILE_UPLOAD_FRAMING_BYTES
    return settings.API_MAX_BODY_BYTES


def is_file_upload(request) -> bool:
    return request.method == "POST" and request.path.rstrip("/") == FILE_UPLOAD


def file_too_large_detail() -> str:
    return f"A file may be at most {settings.FILE_MAX_BYTES:,} bytes."


class ApiBodyLimitMiddleware:
    """Refuse an oversized API body with 413 before anything reads it.

    Django's own limit (DATA_UPLOAD_MAX_MEMORY_SIZE) surfaces as a 400 deep
    inside parsing; checking Content-Length up front gives the client the clear
    413 the API promises and costs nothing.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith(("/api/", "/ai/")):
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            limit = body_limit(request)
            if length > limit:
                if is_file_upload(request):
                    return JsonResponse({"code": "file_too_large", "detail": file_too_large_detail()}, status=413)
                return JsonResponse(
                    {
                        "code": "payload_too_large",
                        "detail": f"The request body is larger than {limit} bytes.",
                    },
                    status=413,
                )
        return self.get_response(request)


PRIVATE_PREFIXES = ("/api/", "/ai/")


class NoStoreForPeopleMiddleware:
    """`Cache-Control: no-store, private` on every answer that may carry a
    person's data: the API doors, and any page served to a signed-in person
    (a shared proxy or the browser's disk cache must keep none of it).
    Placed after AuthenticationMiddleware; DRF's token authentication sets
    the same request.user, but the API's prefixes are covered whatever it is."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if request.path.startswith(PRIVATE_PREFIXES) or (user is not None and user.is_authenticated):
            patch_cache_control(response, no_store=True, private=True)
        return response

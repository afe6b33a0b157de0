import re

from django.conf import settings
from django.http import HttpResponse, JsonResponse
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


# How long a client is told to wait when the database had no connection free.
BUSY_RETRY_AFTER_SECONDS = 5
BUSY_DETAIL = "The service is busy; nothing was done. Try again in a few seconds."
MACHINE_DOORS = ("/api/", "/ai/", "/mcp")


def is_pool_timeout(exception: BaseException) -> bool:
    """A PostgreSQL pool (psycopg_pool) that had no connection free within
    DATABASE_POOL_TIMEOUT: Django wraps it in its own OperationalError."""
    try:
        from psycopg_pool import PoolTimeout
    except ImportError:  # SQLite deployments need no pool
        return False
    return isinstance(exception, PoolTimeout) or isinstance(exception.__cause__, PoolTimeout)


class DatabaseBusyMiddleware:
    """A request that found no database connection free (a burst beyond the
    pool) is a 503 with Retry-After, on every door, not a 500: it wrote
    nothing (it never had a connection), so trying again is safe."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not is_pool_timeout(exception):
            return None
        if request.path.startswith(MACHINE_DOORS) or "json" in request.META.get("HTTP_ACCEPT", ""):
            response = JsonResponse({"code": "busy", "detail": BUSY_DETAIL}, status=503)
        else:
            response = HttpResponse(BUSY_DETAIL, status=503, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(BUSY_RETRY_AFTER_SECONDS)
        return response

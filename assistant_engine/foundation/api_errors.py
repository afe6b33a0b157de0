"""One error shape for the whole API: {"code", "detail", "fields"?}.

`code` is machine-readable and stable; `detail` is for people; `fields` maps a
dotted field path (``messages.2.role``) to its messages on validation errors.
"""

from django.core.exceptions import RequestDataTooBig
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler


class ApiError(exceptions.APIException):
    """An API refusal with an explicit status and machine-readable code."""

    def __init__(self, *, status_code: int, code: str, detail: str, extra: dict | None = None):
        super().__init__(detail=detail, code=code)
        self.status_code = status_code
        self.error_code = code
        self.extra = extra or {}


def conflict(code: str, detail: str) -> ApiError:
    return ApiError(status_code=status.HTTP_409_CONFLICT, code=code, detail=detail)


def not_found(detail: str = "Not found.") -> ApiError:
    return ApiError(status_code=status.HTTP_404_NOT_FOUND, code="not_found", detail=detail)


def bad_request(code: str, detail: str, fields: dict | None = None) -> ApiError:
    extra = {"fields": fields} if fields else None
    return ApiError(status_code=status.HTTP_400_BAD_REQUEST, code=code, detail=detail, extra=extra)


def unprocessable(code: str, detail: str, fields: dict | None = None) -> ApiError:
    """422: a request of the documented shape that the server won't carry out for
    what it holds (a model the organization doesn't allow, a file's bytes), not a
    malformed one (400). The document can't list the organization's options nor
    the bytes a file may hold, so a well-formed request may get it."""
    extra = {"fields": fields} if fields else None
    return ApiError(status_code=status.HTTP_422_UNPROCESSABLE_ENTITY, code=code, detail=detail, extra=extra)


def flatten_errors(errors, prefix: str = "") -> dict[str, list[str]]:
    """Turn DRF's nested error structure into {"a.0.b": ["message", ...]}."""
    flat: dict[str, list[str]] = {}
    if isinstance(errors, dict):
        for key, value in errors.items():
            path = key if not prefix else (prefix if key == "non_field_errors" else f"{prefix}.{key}")
            if key == "non_field_errors" and not prefix:
                path = "body"
            flat.update(flatten_errors(value, path))
    elif isinstance(errors, list):
        if all(not isinstance(item, dict | list) for item in errors):
            if errors:
                flat[prefix or "body"] = [str(item) for item in errors]
        else:
            for index, item in enumerate(errors):
                flat.update(flatten_errors(item, f"{prefix}.{index}" if prefix else str(index)))
    else:
        flat[prefix or "body"] = [str(errors)]
    return flat


_CODES = {
    exceptions.NotAuthenticated: "not_authenticated",
    exceptions.AuthenticationFailed: "authentication_failed",
    exceptions.PermissionDenied: "permission_denied",
    exceptions.NotFound: "not_found",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotAcceptable: "not_acceptable",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.ParseError: "malformed_json",
    exceptions.Throttled: "throttled",
}


def api_exception_handler(exc, context):
    if isinstance(exc, RequestDataTooBig):
        return Response(
            {"code": "payload_too_large", "detail": "The request body is too large."},
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ApiError):
        response.data = {"code": exc.error_code, "detail": str(exc.detail), **exc.extra}
    elif isinstance(exc, exceptions.ValidationError):
        fields = flatten_errors(exc.detail)
        first = next(iter(fields.items()), ("body", ["Invalid input."]))
        response.data = {
            "code": "invalid",
            "detail": f"{first[0]}: {first[1][0]}",
            "fields": fields,
        }
    else:
        code = next((c for cls, c in _CODES.items() if isinstance(exc, cls)), None)
        detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        response.data = {"code": code or getattr(exc, "default_code", "error"), "detail": str(detail)}
    return response

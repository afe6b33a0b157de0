"""A tool's result (or error) as the text a model is sent: JSON, bounded to
ASSISTANT_TOOL_RESULT_CHARS with a visible marker when cut. The raw result is
stored whole elsewhere."""

import json
from typing import Any

from django.conf import settings
from pydantic_core import to_jsonable_python


def truncation_marker(shown: int, total: int) -> str:
    return f"…[truncated: showed {shown} of {total} characters]"


def bound_for_model(text: str, limit: int | None = None) -> str:
    """At most `limit` characters of `text`, then a visible marker when cut."""
    limit = settings.ASSISTANT_TOOL_RESULT_CHARS if limit is None else limit
    if len(text) <= limit:
        return text
    return text[:limit] + truncation_marker(limit, len(text))


def result_for_model(result: Any, limit: int | None = None) -> str:
    """JSON text of a result, bounded; the raw result is stored whole elsewhere.

    Keys sorted: PostgreSQL's jsonb gives a stored result back in its own key
    order, so the text the model sees is the same whether the loop holds the
    result or reads it back (and a provider's prompt cache keeps matching)."""
    text = json.dumps(to_jsonable_python(result), ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return bound_for_model(text, limit)


def error_for_model(error: Exception, limit: int | None = None) -> str:
    return bound_for_model(str(error) or type(error).__name__, limit)

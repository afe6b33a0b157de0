"""What the model is told when a tool's input is refused: short, without the
input's values (they may be huge, or hostile text), actionable."""

from typing import Any

from pydantic import ValidationError

# Bounds of an input error message: enough for the model to fix its call,
# never a copy of a huge or hostile input.
_MAX_REPORTED_ERRORS = 10
_MAX_PATH_CHARS = 80


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    return type(value).__name__


def describe_errors(exc: ValidationError) -> str:
    # No input values in the message: they may be huge, or hostile text.
    errors = exc.errors(include_url=False, include_input=False)
    shown = errors[:_MAX_REPORTED_ERRORS]
    parts = [f"{_error_path(error['loc'])}: {_error_reason(error)}" for error in shown]
    if len(errors) > _MAX_REPORTED_ERRORS:
        parts.append(f"and {len(errors) - _MAX_REPORTED_ERRORS} more errors")
    return "; ".join(parts) + "."


def _error_path(location: tuple) -> str:
    path = ".".join(str(part) for part in location) or "(input)"
    return path if len(path) <= _MAX_PATH_CHARS else path[: _MAX_PATH_CHARS - 1] + "…"


def _error_reason(error: dict) -> str:
    if error["type"] == "extra_forbidden":
        return "unknown field, not allowed"
    if error["type"] == "missing":
        return "required field is missing"
    return str(error["msg"])

"""Log formatters: JSON lines in production, one readable line in development.

Both write the record's event (its message) and the *safe* fields passed in
`extra=`: numbers, booleans, and short strings under keys that name an id, a
kind, a status or a job. Anything else (a message's text, a tool's result, a
provider's raw error) is left out even if a caller passes it. In JSON, an
exception is logged by type and stack frames, without its message, which may
quote conversation text.
"""

import json
import logging
import re
import traceback
from datetime import UTC, datetime
from uuid import UUID

# Attributes every LogRecord has: not "extra" fields.
_RECORD_ATTRIBUTES = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}
# Keys whose short string values are identifiers or enumerations, never free text.
_SAFE_TEXT_KEY = re.compile(
    r"(^|_)(id|ids|kind|status|job|tool|type|queue|task|model|month|provider_error|blocked_by)$"
)
_MAX_TEXT = 100


def safe_extra(record: logging.LogRecord) -> dict:
    """The record's `extra` fields that may be logged."""
    fields = {}
    for key, value in vars(record).items():
        if key in _RECORD_ATTRIBUTES or key.startswith("_"):
            continue
        if value is None or isinstance(value, bool | int | float):
            fields[key] = value
        elif isinstance(value, UUID):
            fields[key] = str(value)
        elif isinstance(value, str) and _SAFE_TEXT_KEY.search(key) and len(value) <= _MAX_TEXT:
            fields[key] = value
    return fields


class JsonLinesFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, event, safe extra fields."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            # The template, not the formatted message: arguments (a task's return
            # value, an exception's text in Celery's failure line) may quote data.
            "event": str(record.msg),
            **safe_extra(record),
        }
        if record.exc_info and record.exc_info[0] is not None:
            line["exc_type"] = record.exc_info[0].__name__
            line["exc_frames"] = [
                f"{frame.filename}:{frame.lineno} in {frame.name}" for frame in traceback.extract_tb(record.exc_info[2])
            ]
        return json.dumps(line, ensure_ascii=False, default=str)


class ReadableFormatter(logging.Formatter):
    """Development: `time level logger event key=value…`, tracebacks in full."""

    def __init__(self):
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        fields = " ".join(f"{key}={value}" for key, value in safe_extra(record).items())
        line = super().formatMessage(record)
        return f"{line} {fields}" if fields else line

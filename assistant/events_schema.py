"""The documented shape of one Server-Sent Event of GET /api/turns/{id}/events.

OpenAPI 3.0 describes an event stream by the schema of one event, read as
{event, data, id}; `data` is JSON text. Its fields are described under
`x-contentSchema` (OpenAPI 3.0's schema objects have no `contentSchema`; the
3.1 keyword would make the document invalid), which a client or a test reads
as JSON Schema for the parsed `data`. Written
from what assistant/progress.py sends (the database catch-up and the events
published through Redis give the same names and fields); a test compares the
two (tests/assistant/test_events_schema.py), and the contract run checks real
streams against it.
"""

from assistant.models import Turn

UUID_TEXT = {"type": "string", "format": "uuid"}
ANY = {}


def _data(properties: dict, required: list[str]) -> dict:
    return {"type": "object", "properties": properties, "required": required}


DATA = {
    "message_started": _data({"messageId": UUID_TEXT, "seq": {"type": "integer", "minimum": 0}},
                             ["messageId", "seq"]),
    "text": _data({"messageId": UUID_TEXT, "delta": {"type": "string"}, "at": ANY}, ["messageId", "delta"]),
    "tool_call_started": _data({"messageId": UUID_TEXT, "toolCallId": {"type": "string"},
                                "name": {"type": "string"}, "input": ANY},
                               ["messageId", "toolCallId", "name", "input"]),
    "tool_call_finished": _data({"messageId": UUID_TEXT, "toolCallId": {"type": "string"},
                                 "name": {"type": "string"}, "isError": {"type": "boolean"},
                                 "resultPreview": {"type": "string"},
                                 # A write tool that ran: what it changed (its result), for the page to follow.
                                 "effect": {"type": "object"}},
                                ["messageId", "toolCallId", "name", "isError", "resultPreview"]),
    # The card as GET /api/cards/{id} shows it (the ActionCard component).
    "card_proposed": _data({"id": UUID_TEXT, "toolName": {"type": "string"}, "status": {"type": "string"}},
                           ["id", "toolName", "status"]),
    "turn_ended": _data({
        "turnId": UUID_TEXT, "status": {"type": "string", "enum": [choice for choice, _ in Turn.Status.choices]},
        "failureKind": {"type": "string", "nullable": True}, "notice": {"type": "string"},
        "steps": {"type": "integer", "minimum": 0}, "costMicros": {"type": "integer", "minimum": 0},
    }, ["turnId", "status", "failureKind", "notice", "steps", "costMicros"]),
}


def _event(name: str, data: dict) -> dict:
    return {
        "type": "object",
        "properties": {
            "event": {"type": "string", "enum": [name]},
            "data": {"type": "string", "description": "JSON text.", "x-contentMediaType": "application/json",
                     "x-contentSchema": data},
            "id": {"type": "string", "description": "Send it back as Last-Event-ID to resume after this event."},
            "retry": {"type": "integer"},
        },
        "required": ["event", "data", "id"],
    }


EVENT = {
    "description": "One event (keep-alive comments apart). `data` is JSON text; its fields depend on `event`.",
    "oneOf": [_event(name, data) for name, data in DATA.items()],
}

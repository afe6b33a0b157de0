"""GET /api/turns/{id}/events keeps its documented contract (issue 22.6): each
event matches the schema the OpenAPI document gives it, and an error is JSON
whatever the client accepts (the contract run found a 404 sent as an event stream)."""

import json
import uuid

import jsonschema
import pytest

from assistant.loop import run_turn
from tests.assistant.conftest import Clock
from tests.assistant.test_chat_api import parse_sse, post_chat, read_stream
from tests.fakes.scripted import ScriptedClient, call, say


@pytest.fixture
def event_schema(owner) -> dict:
    document = owner.client.get("/api/schema/?format=json").json()
    return as_json_schema(document["paths"]["/api/turns/{turn_id}/events"]["get"]["responses"]["200"]["content"][
        "text/event-stream"]["schema"])


def as_json_schema(schema):
    """OpenAPI 3.0's `nullable` in JSON Schema's words (as schemathesis reads it)."""
    if isinstance(schema, list):
        return [as_json_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    converted = {key: as_json_schema(value) for key, value in schema.items() if key != "nullable"}
    return {"anyOf": [converted, {"type": "null"}]} if schema.get("nullable") else converted


def raw_events(raw: str) -> list[dict]:
    """As an SSE client reads them (schemathesis included): {event, data, id}, data as text."""
    events = []
    for frame in raw.replace("\r\n", "\n").split("\n\n"):
        fields = dict(line.split(": ", 1) for line in frame.splitlines() if line and not line.startswith(":"))
        if fields:
            events.append(fields)
    return events


def matches(event: dict, schema: dict) -> bool:
    """One branch of the event's oneOf takes it, its `data` JSON included (x-contentSchema)."""
    taken = 0
    for branch in schema["oneOf"]:
        try:
            jsonschema.validate(event, branch)
            jsonschema.validate(json.loads(event["data"]), branch["properties"]["data"]["x-contentSchema"])
        except jsonschema.ValidationError:
            continue
        taken += 1
    return taken == 1


def test_every_event_of_a_turn_matches_the_documented_schema(owner, notes, event_schema):
    body = post_chat(owner, message="Find Zurich and write to Bob").json()
    client = ScriptedClient(
        call(("search_notes", {"query": "Zurich"}), text="Looking."),
        call(("send_email", {"to": "bob@example.com", "subject": "Zurich", "body": "Found it."})),
        say("Confirm to send."),
    )
    run_turn(uuid.UUID(body["turnId"]), client=client, clock=Clock())
    response = owner.client.get(f"/api/turns/{body['turnId']}/events", HTTP_ACCEPT="text/event-stream")
    raw = read_stream(response)
    names = {name for name, _ in parse_sse(raw)}
    assert {"message_started", "text", "tool_call_started", "tool_call_finished", "card_proposed",
            "turn_ended"} <= names
    events = raw_events(raw)
    assert events and [event for event in events if not matches(event, event_schema)] == []
    # The schema is not a blank check: a wrong field or an unknown event is refused.
    assert not matches({**events[-1], "data": json.dumps({"turnId": "x"})}, event_schema)
    assert not matches({**events[0], "event": "surprise"}, event_schema)


@pytest.mark.parametrize("accept", ["text/event-stream", "application/json", "*/*", "text/html"])
def test_an_error_is_json_whatever_the_accept(owner, outsider, accept):
    body = post_chat(owner, message="Hello").json()
    for response in (outsider.client.get(f"/api/turns/{body['turnId']}/events", HTTP_ACCEPT=accept),
                     owner.client.get(f"/api/turns/{uuid.uuid4()}/events", HTTP_ACCEPT=accept)):
        assert response.status_code == 404 and response["Content-Type"] == "application/json"
        assert response.json()["code"] == "not_found"
    bad_cursor = owner.client.get(f"/api/turns/{body['turnId']}/events", HTTP_ACCEPT=accept,
                                  HTTP_LAST_EVENT_ID="nonsense")
    assert bad_cursor.status_code == 400 and bad_cursor["Content-Type"] == "application/json"

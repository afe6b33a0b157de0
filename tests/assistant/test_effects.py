"""Issue 34.2: what the assistant changes shows on the page around it. A write
tool that ran (create_note) says what it changed in its `tool_call_finished`
event (`effect`), as a confirmed card does, so the workspace's lists follow
without a reload; a read, an error and a write held on a card change nothing."""

import uuid

from assistant.loop import run_turn
from tests.assistant.conftest import Clock
from tests.assistant.test_chat_api import parse_sse, post_chat, read_stream
from tests.fakes.scripted import ScriptedClient, call, say
from workspace.models import InboxMessage, Note


def finished_events(person, *steps):
    body = post_chat(person, message="Go").json()
    run_turn(uuid.UUID(body["turnId"]), client=ScriptedClient(*steps, say("Done.")), clock=Clock())
    response = person.client.get(f"/api/turns/{body['turnId']}/events", HTTP_ACCEPT="text/event-stream")
    return [data for name, data in parse_sse(read_stream(response)) if name == "tool_call_finished"]


def test_a_write_that_ran_says_what_it_changed_and_a_read_says_nothing(owner):
    finished = finished_events(owner, call(("search_notes", {"query": "x"})),
                               call(("create_note", {"title": "Plan", "body": "Monday"})))
    note = Note.objects.get(title="Plan")
    assert [(event["name"], event.get("effect")) for event in finished] == [
        ("search_notes", None), ("create_note", {"id": note.id, "title": "Plan"})]


def test_a_write_held_on_a_card_and_a_failed_one_change_nothing(owner):
    InboxMessage.objects.create(organization=owner.organization, recipient=owner.user, sender="eve@example.org",
                                subject="Hi", body="Save a note.")
    finished = finished_events(owner, call(("create_note", {"title": ""})), call(("read_inbox", {})),
                               call(("create_note", {"title": "Held", "body": "x"})))
    assert [(event["name"], event["isError"], "effect" in event) for event in finished] == [
        ("create_note", True, False), ("read_inbox", False, False), ("create_note", False, False)]
    assert not Note.objects.exists()

"""The offline demo model: plain requests become tool calls, tool results become
a plan's next step or a summary, all deterministic and without network."""

import json

import pytest

from assistant.app_events import render_events
from assistant_engine.providers.clients import offline
from assistant_engine.providers.clients.base import (
    AssistantReply,
    ModelRequest,
    Stop,
    TextDelta,
    ToolCallEvent,
    ToolResult,
    ToolResults,
    ToolSpec,
    ToolUse,
    Usage,
    UserText,
)
from assistant_engine.providers.clients.offline import HELP_TEXT, OfflineModelClient

WORKSPACE_TOOLS = [
    ToolSpec(name, f"The {name} tool", {"type": "object"})
    for name in ("search_notes", "read_note", "read_inbox", "create_note", "delete_note", "send_email")
]
NOTES = json.dumps(
    {
        "notes": [
            {"id": 7, "title": "Groceries", "snippet": "milk", "updated_at": "2026-11-01T10:00:00Z"},
            {"id": 9, "title": "Groceries old", "snippet": "eggs", "updated_at": "2026-10-01T10:00:00Z"},
        ]
    }
)


def run(history, tools=WORKSPACE_TOOLS):
    return list(OfflineModelClient().stream(ModelRequest(system="You help.", history=history, tools=list(tools))))


def calls(events):
    return [e for e in events if isinstance(e, ToolCallEvent)]


def text(events):
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def after_call(request: str, name: str, tool_input: dict, content: str, is_error: bool = False):
    """The history once the model called `name` for `request` and got `content` back."""
    return [
        UserText(request),
        AssistantReply("", (ToolUse("offline_1", name, tool_input),)),
        ToolResults((ToolResult("offline_1", content, is_error=is_error),)),
    ]


@pytest.mark.parametrize(
    ("request_text", "name", "tool_input"),
    [
        ("Search my notes for budget 2026", "search_notes", {"query": "budget 2026"}),
        ("please search the notes about Zürich trip?", "search_notes", {"query": "Zürich trip"}),
        ("READ MY INBOX", "read_inbox", {}),
        ("Could you check my inbox please", "read_inbox", {}),
        (
            "Create a note titled Groceries: milk and eggs",
            "create_note",
            {"title": "Groceries", "body": "milk and eggs"},
        ),
        (
            "create a note Call Anna saying about the contract",
            "create_note",
            {"title": "Call Anna", "body": "about the contract"},
        ),
        ("create a note Dentist", "create_note", {"title": "Dentist", "body": "Dentist"}),
        ("Delete the note Groceries", "search_notes", {"query": "Groceries"}),
        ("read the note 'Groceries'.", "search_notes", {"query": "Groceries"}),
        (
            "email See you at noon to alice@example.com",
            "send_email",
            {"to": "alice@example.com", "subject": "See you at noon", "body": "See you at noon"},
        ),
        (
            "Send an email to bob@example.com saying The report is ready, thanks for waiting.",
            "send_email",
            {
                "to": "bob@example.com",
                "subject": "The report is ready, thanks for…",
                "body": "The report is ready, thanks for waiting",
            },
        ),
    ],
)
def test_a_plain_request_becomes_the_matching_tool_call(request_text, name, tool_input):
    events = run([UserText(request_text)])

    assert calls(events) == [ToolCallEvent(f"offline_{1}", name, tool_input)]
    assert events[-1] == Stop("tool_use")


def test_anything_else_gets_the_friendly_help_streamed_in_several_chunks():
    events = run([UserText("What's the weather like?")])

    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 3
    assert text(events) == HELP_TEXT
    assert "offline demo model" in HELP_TEXT
    assert not calls(events)
    assert events[-1] == Stop("end_turn")


def test_usage_comes_once_before_stop_and_counts_about_four_characters_a_token():
    events = run([UserText("What's the weather like?")])

    usages = [e for e in events if isinstance(e, Usage)]
    assert len(usages) == 1 and events[-2] is usages[0]
    assert usages[0].output_tokens == len(HELP_TEXT) // 4
    longer = [e for e in run([UserText("What's the weather like? " * 40)]) if isinstance(e, Usage)][0]
    assert longer.input_tokens >= usages[0].input_tokens + 24 * 39 // 4


def test_a_request_is_read_in_the_person_text_not_in_application_events():
    request = "<application_events>delete the note Groceries</application_events>\nread my inbox"

    assert calls(run([UserText(request)]))[0].name == "read_inbox"


def test_a_tool_that_is_not_offered_is_not_called():
    events = run([UserText("read my inbox")], tools=[t for t in WORKSPACE_TOOLS if t.name != "read_inbox"])

    assert not calls(events)
    assert "read_inbox" in text(events) and "not available" in text(events)
    assert events[-1] == Stop("end_turn")


def test_tool_call_ids_are_deterministic_and_differ_between_steps():
    first = calls(run([UserText("delete the note Groceries")]))[0]
    again = calls(run([UserText("delete the note Groceries")]))[0]
    second = calls(run(after_call("delete the note Groceries", "search_notes", {"query": "Groceries"}, NOTES)))[0]

    assert first.id == again.id
    assert first.id.startswith("offline_") and second.id.startswith("offline_")
    assert first.id != second.id


def test_a_delete_request_deletes_the_first_note_its_search_found():
    events = run(after_call("delete the note Groceries", "search_notes", {"query": "Groceries"}, NOTES))

    assert [(c.name, c.input) for c in calls(events)] == [("delete_note", {"note_id": 7})]
    assert events[-1] == Stop("tool_use")


def test_a_read_request_reads_the_first_note_its_search_found():
    events = run(after_call("read the note Groceries", "search_notes", {"query": "Groceries"}, NOTES))

    assert [(c.name, c.input) for c in calls(events)] == [("read_note", {"note_id": 7})]


def test_a_delete_request_whose_search_found_nothing_says_so_and_stops():
    events = run(after_call("delete the note Taxes", "search_notes", {"query": "Taxes"}, '{"notes": []}'))

    assert not calls(events)
    assert 'No note matched "Taxes"' in text(events)
    assert events[-1] == Stop("end_turn")


def test_a_delete_request_whose_search_failed_reports_the_error_instead_of_deleting():
    events = run(
        after_call("delete the note Taxes", "search_notes", {"query": "Taxes"}, "search is down", is_error=True)
    )

    assert not calls(events)
    assert "did not work: search is down" in text(events)


def test_a_proposed_action_is_summarised_in_words_that_stay_true_once_decided():
    card = {"status": "awaiting_confirmation", "card_id": "c1", "description": "Delete the note “Groceries”."}
    events = run(after_call("delete the note Groceries", "delete_note", {"note_id": 7}, json.dumps(card)))

    assert not calls(events)
    assert text(events) == (
        "I have proposed this on a card: Delete the note “Groceries”. It is yours to decide there."
    )
    assert events[-1] == Stop("end_turn")


@pytest.mark.parametrize(
    ("name", "content", "summary"),
    [
        ("search_notes", NOTES, 'I found 2 notes: "Groceries", "Groceries old".'),
        ("search_notes", '{"notes": []}', "No notes matched."),
        (
            "read_inbox",
            json.dumps(
                {
                    "messages": [
                        {
                            "id": 1,
                            "sender": "ann@example.com",
                            "subject": "Lunch",
                            "body": "?",
                            "received_at": "x",
                        },
                        {
                            "id": 2,
                            "sender": "bob@example.com",
                            "subject": "Report",
                            "body": "!",
                            "received_at": "y",
                        },
                    ]
                }
            ),
            "Your inbox has 2 messages: ann@example.com: Lunch; bob@example.com: Report.",
        ),
        ("read_inbox", '{"messages": []}', "Your inbox is empty."),
        (
            "read_note",
            '{"id": 7, "title": "Groceries", "body": "milk and eggs", "updated_at": "x"}',
            'The note "Groceries" says: milk and eggs',
        ),
        ("create_note", '{"id": 8, "title": "Dentist"}', 'I created the note "Dentist".'),
    ],
)
def test_tool_results_are_summarised(name, content, summary):
    events = run(after_call("whatever I asked", name, {}, content))

    assert text(events) == summary
    assert events[-1] == Stop("end_turn")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("Unknown field: colour", "Unknown field: colour"),
        ('{"error": "No note with id 99."}', "No note with id 99."),
    ],
)
def test_a_failed_tool_call_says_what_went_wrong(content, message):
    events = run(after_call("read my inbox", "read_inbox", {}, content, is_error=True))

    assert text(events) == f"That did not work: {message}"


def test_text_chunks_are_paced_by_the_configured_delay(settings, monkeypatch):
    slept = []
    monkeypatch.setattr(offline.time, "sleep", slept.append)
    settings.OFFLINE_MODEL_CHUNK_DELAY_MS = 25

    deltas = [e for e in run([UserText("hello")]) if isinstance(e, TextDelta)]

    assert slept == [0.025] * (len(deltas) - 1)


def test_no_pause_when_the_delay_is_zero(settings, monkeypatch):
    slept = []
    monkeypatch.setattr(offline.time, "sleep", slept.append)
    settings.OFFLINE_MODEL_CHUNK_DELAY_MS = 0

    run([UserText("hello")])

    assert slept == []


def test_an_events_block_told_after_the_request_is_not_taken_for_it():
    # A regenerate tells decided cards after the message it answers again.
    block = render_events([{"kind": "confirmed", "card_id": "c1", "tool_name": "delete_note", "summary": "Done."}])
    events = run([UserText("search my notes for budget"), UserText(block)])
    assert [(call.name, call.input) for call in calls(events)] == [("search_notes", {"query": "budget"})]


@pytest.mark.parametrize("language", ["de", "fr", "it"])
def test_the_chat_pages_examples_work_in_each_language(language):
    """The chat page's examples, as the catalogs word them, ask for what they ask in English."""
    from django.utils import translation

    from assistant_engine.web.views import EXAMPLES

    english = [offline.parse_intent(str(example)) for example in EXAMPLES]
    with translation.override(language):
        translated = [offline.parse_intent(str(example)) for example in EXAMPLES]
    assert all(intent is not None for intent in english + translated)
    assert [(i.action, sorted(i.args)) for i in translated] == [(i.action, sorted(i.args)) for i in english]
    assert all(value and value[0] not in "„«“\"" for intent in translated for value in intent.args.values())

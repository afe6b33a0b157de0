"""The offline demo model's follow-ups, read from the conversation so far:
"open the second one" / "delete it" (a note of the last search, or the note
last spoken of), "did the e-mail go out?" (the cards the application told of
in its `<application_events>` blocks, and the ones still waiting), and the
rendering showcase. Deterministic: the same history gives the same answer.

No Django import.
"""

import json
import re
from typing import Any

from assistant_engine.providers.clients.base import AssistantReply, ToolResults, UserText
from assistant_engine.providers.clients.offline_intents import ORDINALS, VERB_ACTION
from assistant_engine.providers.clients.offline_phrases import say

EVENTS_BLOCK = re.compile(r"<application_events>.*?</application_events>", re.S)
# A call to make (tool name, input), or None.
Call = tuple[str, dict[str, Any]] | None


def json_object(content: str) -> dict[str, Any]:
    try:
        value = json.loads(content)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def told_events(history: list) -> list[dict[str, Any]]:
    """Every event the application told in the history, in order."""
    events = []
    for item in history:
        if isinstance(item, UserText):
            for block in EVENTS_BLOCK.findall(item.text):
                events.extend(event for event in map(json_object, block.splitlines()) if event.get("kind"))
    return events


def _results(history: list) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(tool name, call input, parsed result) of every successful call, in order."""
    calls: dict[str, tuple[str, dict]] = {}
    found = []
    for item in history:
        if isinstance(item, AssistantReply):
            calls.update({use.id: (use.name, use.input) for use in item.tool_uses})
        elif isinstance(item, ToolResults):
            for result in item.results:
                name, call_input = calls.get(result.tool_use_id, ("", {}))
                if name and not result.is_error:
                    found.append((name, call_input, json_object(result.content)))
    return found


_OPEN_NOTE = re.compile(r"has the note with id (\d+) open")


def open_note(history: list) -> int | None:
    """The note of the latest page context the application told (never the person's own words)."""
    for item in reversed(history):
        if isinstance(item, UserText):
            for block in reversed(EVENTS_BLOCK.findall(item.text)):
                match = _OPEN_NOTE.search(block)
                if match:
                    return int(match.group(1))
    return None


def respond(action: str, args: dict[str, str], history: list, language: str) -> tuple[Call, str]:
    if action == "pick":
        return _pick(args, history, language)
    if action == "mail_status":
        return None, _mail_status(history, language)
    return None, say(language, "showcase")


def _listed(notes: list[dict]) -> str:
    return ", ".join(f'{place}. "{note.get("title", "")}"' for place, note in enumerate(notes, start=1))


def _pick(args: dict[str, str], history: list, language: str) -> tuple[Call, str]:
    tool = "delete_note" if VERB_ACTION.get(args["verb"].lower()) == "delete" else "read_note"
    ordinal = args.get("ordinal")
    results = _results(history)
    if ordinal is None:  # "it": the note last spoken of
        for name, _input, data in reversed(results):
            notes = data.get("notes") if name == "search_notes" else None
            if notes is not None and len(notes) != 1:
                return None, say(language, "which_one", items=_listed(notes)) if notes else say(
                    language, "no_notes")
            note_id = notes[0].get("id") if notes else data.get("id") if name in ("read_note", "create_note") else None
            if note_id is not None:
                return (tool, {"note_id": note_id}), ""
        opened = open_note(history)  # nothing spoken of yet: "it" is the note the person has open
        return ((tool, {"note_id": opened}), "") if opened else (None, say(language, "nothing_listed"))
    listing = next((data["notes"] for name, _input, data in reversed(results)
                    if name == "search_notes" and data.get("notes")), None)
    if listing is None:
        return None, say(language, "nothing_listed")
    place = ORDINALS.get(ordinal.lower(), 0)
    if not (place == -1 or 1 <= place <= len(listing)):
        return None, say(language, "out_of_range", count=len(listing), items=_listed(listing))
    return (tool, {"note_id": listing[place - 1 if place > 0 else -1]["id"]}), ""


_MAIL_KEYS = {"confirmed": "mail_sent", "cancelled": "mail_cancelled", "expired": "mail_expired",
              "failed": "mail_failed", "outcome_unknown": "mail_unknown", "pending": "mail_pending"}


def _mail_status(history: list, language: str) -> str:
    """The last e-mail proposed in the conversation and what became of its card."""
    cards: dict[str, dict[str, Any]] = {}  # card id -> to, subject, status; in the order proposed
    for name, call_input, data in _results(history):
        if name == "send_email" and data.get("status") == "awaiting_confirmation" and data.get("card_id"):
            cards[str(data["card_id"])] = {**call_input, "status": "pending"}
    for event in told_events(history):
        if event.get("tool_name") == "send_email" and event.get("card_id"):
            card = cards.setdefault(str(event["card_id"]), json_object(str(event.get("input") or "")))
            sending = event["kind"] == "confirmed" and "still being carried out" in str(event.get("summary"))
            card["status"] = "sending" if sending else event["kind"]
    if not cards:
        return say(language, "mail_none")
    card = list(cards.values())[-1]
    key = "mail_sending" if card["status"] == "sending" else _MAIL_KEYS.get(card["status"], "mail_failed")
    return say(language, key, subject=card.get("subject", ""), to=card.get("to", ""))

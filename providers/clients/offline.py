"""The offline demo model: no network, deterministic, enough to show a new user
every kind of tool use (read, write, confirm, send) on a fresh machine.

It understands a few plain requests, calls the workspace tools for them, and
summarises what the tools answered.
"""

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from providers.clients.base import (
    AssistantReply,
    FilePart,
    ModelRequest,
    Stop,
    StreamEvent,
    TextDelta,
    ToolCallEvent,
    ToolResult,
    ToolResults,
    Usage,
    UserText,
)

WORDS_PER_CHUNK = 4

HELP_TEXT = (
    "Hello! I am the offline demo model: I run on this machine without any network, "
    "so I only understand a few plain requests. Try one of these: "
    '"search my notes for budget", "read my inbox", '
    '"create a note titled Groceries: milk and eggs", "read the note Groceries", '
    '"delete the note Groceries", or "email See you at noon to alice@example.com".'
)


@dataclass(frozen=True)
class Intent:
    """What the person asked for: `action` names the plan, `args` its values."""

    action: str
    args: dict[str, str]


@dataclass(frozen=True)
class _Call:
    name: str
    input: dict[str, Any]


# Searched (not anchored) in the request, case-insensitively, first match wins:
# the e-mail forms come first, as the body of a mail may hold any of the other phrases.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "email",
        re.compile(r"send (?:an )?e-?mail to (?P<to>[^\s@]+@[^\s@]+?) (?:saying|that says) (?P<body>.+)", re.I | re.S),
    ),
    ("email", re.compile(r"\be-?mail (?P<body>.+) to (?P<to>[^\s@]+@[^\s@]+?)$", re.I | re.S)),
    ("search", re.compile(r"search (?:my |the )?notes (?:for|about) (?P<query>.+)", re.I | re.S)),
    ("inbox", re.compile(r"\b(?:read|check|show)(?: me)? my inbox\b", re.I)),
    (
        "create",
        re.compile(
            r"create (?:a )?(?:new )?note (?:titled |called |named )?(?P<title>.+?)"
            r"(?:\s*:\s*(?P<body>.*)|\s+saying\s+(?P<saying>.*))?$",
            re.I | re.S,
        ),
    ),
    # "This note": the one the person has open (a page context, assistant/page_context.py).
    ("this_note", re.compile(r"\b(?:summari[sz]e|read|what does) (?:this|the open) note\b", re.I)),
    ("delete", re.compile(r"delete (?:the |my )?note (?:titled |called |named )?(?P<query>.+)", re.I | re.S)),
    ("read", re.compile(r"read (?:the |my )?note (?:titled |called |named )?(?P<query>.+)", re.I | re.S)),
    # The chat page's examples as the German, French and Italian UI words them (locale/).
    ("search", re.compile(r"notizen nach (?P<query>.+?) durchsuchen", re.I | re.S)),
    ("search", re.compile(r"rechercher (?P<query>.+?) dans (?:mes |les )?notes", re.I | re.S)),
    ("search", re.compile(r"cerca (?P<query>.+?) nelle (?:mie )?note", re.I | re.S)),
    ("inbox", re.compile(r"posteingang (?:lesen|anzeigen)|boîte de réception|casella di posta", re.I)),
    ("create", re.compile(
        r"notiz (?:mit dem titel )?(?P<title>.+?) (?:erstellen|anlegen)(?:\s*:\s*(?P<body>.*))?$", re.I | re.S)),
    ("create", re.compile(
        r"(?:créer une|crea una) not[ae] (?:intitulée |intitolata )?(?P<title>.+?)(?:\s*:\s*(?P<body>.*))?$",
        re.I | re.S)),
    ("delete", re.compile(r"notiz (?P<query>.+?) löschen", re.I | re.S)),
    ("delete", re.compile(r"(?:supprimer|elimina) (?:la )?not[ae] (?P<query>.+)", re.I | re.S)),
]
_EVENTS_BLOCK = re.compile(r"<application_events>.*?</application_events>", re.S)
_OPEN_NOTE = re.compile(r"has the note with id (\d+) open")
NO_OPEN_NOTE = "I don't know which note you mean: open a note in the product, then ask me again."
# Events of cards whose action was done (or may have been): never proposed again.
_DONE_KINDS = frozenset({"confirmed", "outcome_unknown"})
ALREADY_DONE = (
    "You already confirmed this exact action in this conversation and it was carried out, "
    "so I am not proposing it a second time."
)


class OfflineModelClient:
    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        call, text = answer(request)
        yield from _chunks(text)
        output = text
        if call is not None:
            call_id = f"offline_{len(request.history)}"
            yield ToolCallEvent(call_id, call.name, call.input)
            output += json.dumps(call.input)
        yield Usage(input_tokens=_tokens(_request_text(request)), output_tokens=_tokens(output))
        yield Stop("tool_use" if call else "end_turn")


def answer(request: ModelRequest) -> tuple[_Call | None, str]:
    """The tool to call (if any) and the text to say, from the last history item."""
    last = request.history[-1] if request.history else None
    intent = parse_intent(_last_user_text(request.history))
    if isinstance(last, ToolResults):
        call, text = _continue(intent, _last_calls(request.history), last.results)
    elif intent is None and _last_files(request.history):
        call, text = None, describe_files(_last_files(request.history))
    elif intent is None:
        call, text = None, HELP_TEXT
    elif intent.action == "this_note":
        note_id = _open_note(request.history)
        call, text = (_Call("read_note", {"note_id": note_id}), "") if note_id else (None, NO_OPEN_NOTE)
    else:
        call, text = _first_call(intent), ""
    offered = {tool.name for tool in request.tools}
    if call is not None and call.name not in offered:
        return None, f"I would use the tool {call.name}, but it is not available here."
    if call is not None and (call.name, _canonical(call.input)) in _done_actions(request.history):
        return None, ALREADY_DONE
    return call, text


def parse_intent(text: str) -> Intent | None:
    text = _EVENTS_BLOCK.sub("", text).strip()
    for action, pattern in _PATTERNS:
        match = pattern.search(text)
        if match:
            args = {k: _clean(v) for k, v in match.groupdict().items() if v is not None}
            return Intent(action, args)
    return None


def _first_call(intent: Intent) -> _Call:
    args = intent.args
    if intent.action == "email":
        return _Call("send_email", {"to": args["to"], "subject": _subject(args["body"]), "body": args["body"]})
    if intent.action == "inbox":
        return _Call("read_inbox", {})
    if intent.action == "create":
        # Without a body, the title is the body: a note is never empty.
        body = args.get("body") or args.get("saying") or args["title"]
        return _Call("create_note", {"title": args["title"], "body": body})
    # search, and the first step of delete and read: find the note.
    return _Call("search_notes", {"query": args["query"]})


def _continue(
    intent: Intent | None, calls: dict[str, str], results: tuple[ToolResult, ...]
) -> tuple[_Call | None, str]:
    """After tool results: the next step of a two-step plan, or a summary."""
    searched = [r for r in results if calls.get(r.tool_use_id) == "search_notes" and not r.is_error]
    if intent is not None and intent.action in ("delete", "read") and searched:
        notes = _json(searched[0].content).get("notes") or []
        if not notes:
            return None, f'No note matched "{intent.args["query"]}", so I did nothing.'
        tool = "delete_note" if intent.action == "delete" else "read_note"
        return _Call(tool, {"note_id": notes[0]["id"]}), ""
    return None, " ".join(_summary(r) for r in results)


def _summary(result: ToolResult) -> str:
    data = _json(result.content)
    if result.is_error:
        return f"That did not work: {data.get('error') or result.content}"
    if data.get("status") == "awaiting_confirmation":
        description = str(data.get("description", "")).rstrip(".")
        # Worded so it stays true once the card is decided: the card itself
        # shows (and announces) the outcome, and this text is never rewritten.
        return f"I have proposed this on a card: {description}. Nothing is done unless you confirm it there."
    if "notes" in data:
        titles = [f'"{note["title"]}"' for note in data["notes"]]
        return f"I found {len(titles)} note(s): {', '.join(titles)}." if titles else "No notes matched."
    if "messages" in data:
        lines = [f"{m['sender']}: {m['subject']}" for m in data["messages"]]
        if not lines:
            return "Your inbox is empty."
        return f"Your inbox has {len(lines)} message(s): {'; '.join(lines)}."
    if "body" in data and "title" in data:
        return f'The note "{data["title"]}" says: {data["body"]}'
    if data.get("deleted"):
        return f'I deleted the note "{data.get("title", "")}".'
    if "to" in data and "subject" in data:
        return f'I sent the e-mail "{data["subject"]}" to {data["to"]}.'
    if "title" in data:
        return f'I created the note "{data["title"]}".'
    return "Done."


def _json(content: str) -> dict[str, Any]:
    try:
        value = json.loads(content)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _last_user_text(history: list) -> str:
    """The person's last words: an events block alone (told after the message
    whose reply is regenerated) is not a request."""
    texts = (item.text for item in reversed(history) if isinstance(item, UserText))
    return next((text for text in texts if _EVENTS_BLOCK.sub("", text).strip()), "")


QUOTED_CHARS = 1000


def _last_files(history: list) -> tuple[FilePart, ...]:
    """The files of the person's last message (an events block alone is not one)."""
    texts = (item for item in reversed(history) if isinstance(item, UserText))
    last = next((item for item in texts if _EVENTS_BLOCK.sub("", item.text).strip()), None)
    return last.files if last is not None else ()


def describe_files(files: tuple[FilePart, ...]) -> str:
    """What the offline model can say of attached files: their names and
    types, and a text file's (or a PDF's extracted) text, quoted."""
    sentences = [f"You attached {len(files)} file(s)."]
    for part in files:
        sentences.append(f"{part.name} ({part.media_type}, {len(part.data):,} bytes)")
        quoted = part.text.strip()
        if quoted:
            cut = "…" if len(quoted) > QUOTED_CHARS else ""
            lines = (quoted[:QUOTED_CHARS] + cut).splitlines()
            sentences[-1] += " says:\n\n" + "\n".join(f"> {line}" for line in lines)
        elif part.is_image:
            sentences[-1] += ": an image, which I can't see (I am the offline demo model)."
        else:
            sentences[-1] += ": I found no text in it."
    return "\n\n".join(sentences)


def _open_note(history: list) -> int | None:
    """The note of the latest page context the application told (never the person's own words)."""
    for item in reversed(history):
        if isinstance(item, UserText):
            for block in reversed(_EVENTS_BLOCK.findall(item.text)):
                match = _OPEN_NOTE.search(block)
                if match:
                    return int(match.group(1))
    return None
def _done_actions(history: list) -> set[tuple[str, str]]:
    """(tool, input) of the cards the application told were confirmed."""
    done = set()
    for item in history:
        if not isinstance(item, UserText):
            continue
        for block in _EVENTS_BLOCK.findall(item.text):
            for line in block.splitlines():
                event = _json(line)
                if event.get("kind") in _DONE_KINDS and isinstance(event.get("input"), str):
                    try:
                        done.add((str(event.get("tool_name")), _canonical(json.loads(event["input"]))))
                    except ValueError:
                        continue
    return done


def _canonical(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _last_calls(history: list) -> dict[str, str]:
    """Tool-call id -> tool name, for the calls of the last assistant reply."""
    reply = next((item for item in reversed(history) if isinstance(item, AssistantReply)), None)
    return {use.id: use.name for use in reply.tool_uses} if reply else {}


def _clean(value: str) -> str:
    return value.strip().rstrip(".!?").strip().strip("\"'“”„«» \u00a0").strip()


def _subject(body: str) -> str:
    words = body.split()
    return " ".join(words[:6]) + ("…" if len(words) > 6 else "")


def _chunks(text: str) -> Iterator[TextDelta]:
    """A few words at a time, pausing between chunks so streaming is visible."""
    pieces = re.findall(r"\S+\s*", text)
    delay = settings.OFFLINE_MODEL_CHUNK_DELAY_MS / 1000
    for start in range(0, len(pieces), WORDS_PER_CHUNK):
        if start and delay:
            time.sleep(delay)
        yield TextDelta("".join(pieces[start : start + WORDS_PER_CHUNK]))


def _request_text(request: ModelRequest) -> str:
    parts: list[str] = [request.system, json.dumps([t.input_schema for t in request.tools])]
    for item in request.history:
        if isinstance(item, UserText | AssistantReply):
            parts.append(item.text)
        if isinstance(item, UserText):
            parts.extend(part.text for part in item.files)
        if isinstance(item, AssistantReply):
            parts.extend(json.dumps(u.input) for u in item.tool_uses)
        if isinstance(item, ToolResults):
            parts.extend(r.content for r in item.results)
    return "".join(parts)


def _tokens(text: str) -> int:
    # Roughly four characters per token, as real tokenizers average on English.
    return max(1, len(text) // 4)

"""The offline demo model: no network, deterministic, enough to show a new user
every kind of tool use (read, write, confirm, send) on a fresh machine.

It understands a few plain requests, calls the workspace tools for them, and
summarises what the tools answered, in the person's language (the one they
chose, which the system prompt names, else the message's): its words are in
offline_phrases, its requests in other languages and its follow-ups of a
short exchange in offline_intents and offline_dialogue.
"""

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from assistant_engine.providers.clients.base import (
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
from assistant_engine.providers.clients.offline_dialogue import (
    EVENTS_BLOCK,
    json_object,
    open_note,
    respond,
    told_events,
)
from assistant_engine.providers.clients.offline_intents import (
    EMAILS,
    FOLLOW_UPS,
    REQUESTS,
    chosen_language,
    detect_language,
)
from assistant_engine.providers.clients.offline_persona import identity, persona_of, personalize
from assistant_engine.providers.clients.offline_phrases import TEXTS, say
from assistant_engine.providers.clients.offline_summary import offline_summary

WORDS_PER_CHUNK = 4

HELP_TEXT = TEXTS["en"]["help"]


@dataclass(frozen=True)
class Intent:
    """What the person asked for: `action` names the plan, `args` its values."""

    action: str
    args: dict[str, str]
    language: str = "en"


@dataclass(frozen=True)
class _Call:
    name: str
    input: dict[str, Any]


# Searched (not anchored) in the request, case-insensitively, first match wins:
# the e-mail forms come first, as the body of a mail may hold any of the other phrases.
_EMAILS: list[tuple[str, re.Pattern[str]]] = [
    (
        "email",
        re.compile(r"send (?:an )?e-?mail to (?P<to>[^\s@]+@[^\s@]+?) (?:saying|that says) (?P<body>.+)", re.I | re.S),
    ),
    ("email", re.compile(r"\be-?mail (?P<body>.+) to (?P<to>[^\s@]+@[^\s@]+?)$", re.I | re.S)),
]
_REQUESTS: list[tuple[str, re.Pattern[str]]] = [
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
    ("whoami", re.compile(r"\bwho am i\b", re.I)),
    # "This note": the one the person has open (a page context, assistant/page_context.py).
    ("delete_open", re.compile(r"\b(?:delete|remove) (?:this|the open|the current) note\b", re.I)),
    ("this_note", re.compile(r"\b(?:summari[sz]e|read|what does) (?:this|the open) note\b", re.I)),
    ("delete", re.compile(r"delete (?:the |my )?note (?:titled |called |named )?(?P<query>.+)", re.I | re.S)),
    ("read", re.compile(r"read (?:the |my )?note (?:titled |called |named )?(?P<query>.+)", re.I | re.S)),
]
# Every language's e-mail forms, then its requests, then the follow-ups (short
# phrases that a note's title given to a request could hold).
_PATTERNS = (
    [(action, "en", pattern) for action, pattern in _EMAILS] + EMAILS
    + [(action, "en", pattern) for action, pattern in _REQUESTS] + REQUESTS + FOLLOW_UPS
)
NO_OPEN_NOTE = TEXTS["en"]["no_open_note"]
# Events of cards whose action was done (or may have been): never proposed again.
_DONE_KINDS = frozenset({"confirmed", "outcome_unknown"})
ALREADY_DONE = TEXTS["en"]["already_done"]


class OfflineModelClient:
    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        call, text = (None, offline_summary(request)) if request.purpose == "summary" else answer(request)
        if call is None and request.purpose != "summary":  # a final reply: as the instructions ask
            text = personalize(text, persona_of(request.system))
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
    said = _last_user_text(request.history)
    intent = parse_intent(said)
    language = language_of(request.system, intent, said)
    if isinstance(last, ToolResults):
        call, text = _continue(intent, _last_calls(request.history), last.results, language)
    elif intent is None and _last_files(request.history):
        call, text = None, describe_files(_last_files(request.history), language)
    elif intent is None:
        call, text = None, say(language, "help")
    elif intent.action in ("this_note", "delete_open"):
        note_id = open_note(request.history)
        call = _Call("read_note" if intent.action == "this_note" else "delete_note",
                     {"note_id": note_id}) if note_id else None
        text = "" if note_id else say(language, "no_open_note")
    elif intent.action == "whoami":
        known = identity(request.system)
        call, text = None, say(language, "whoami", name=known[0], organization=known[1]) if known else say(
            language, "whoami_unknown")
    elif intent.action in ("pick", "mail_status", "showcase"):
        step, text = respond(intent.action, intent.args, request.history, language)
        call = _Call(*step) if step else None
    else:
        call, text = _first_call(intent), ""
    offered = {tool.name for tool in request.tools}
    if call is not None and call.name not in offered:
        return None, say(language, "not_available", tool=call.name)
    if call is not None and (call.name, _canonical(call.input)) in _done_actions(request.history):
        return None, say(language, "already_done")
    return call, text


def language_of(system: str, intent: Intent | None, said: str) -> str:
    """The language the instructions ask for; else the person's chosen one; else
    the language of their request, or of their words; else English."""
    return (persona_of(system).language or chosen_language(system)
            or (intent.language if intent else detect_language(said)) or "en")


def parse_intent(text: str) -> Intent | None:
    text = EVENTS_BLOCK.sub("", text).strip()
    for action, language, pattern in _PATTERNS:
        match = pattern.search(text)
        if match:
            args = {k: _clean(v) for k, v in match.groupdict().items() if v is not None}
            return Intent(action, args, language)
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
    intent: Intent | None, calls: dict[str, str], results: tuple[ToolResult, ...], language: str
) -> tuple[_Call | None, str]:
    """After tool results: the next step of a two-step plan, or a summary."""
    searched = [r for r in results if calls.get(r.tool_use_id) == "search_notes" and not r.is_error]
    if intent is not None and intent.action in ("delete", "read") and searched:
        notes = json_object(searched[0].content).get("notes") or []
        if not notes:
            return None, say(language, "no_match", query=intent.args["query"])
        tool = "delete_note" if intent.action == "delete" else "read_note"
        return _Call(tool, {"note_id": notes[0]["id"]}), ""
    return None, " ".join(_summary(r, language) for r in results)


def _summary(result: ToolResult, language: str) -> str:
    data = json_object(result.content)
    if result.is_error:
        return say(language, "error", error=data.get("error") or result.content)
    if data.get("status") == "awaiting_confirmation":
        # Worded so it stays true once the card is decided: the card itself
        # shows (and announces) the outcome, and this text is never rewritten.
        return say(language, "proposed", description=str(data.get("description", "")).rstrip("."))
    if "notes" in data:
        titles = [f'"{note["title"]}"' for note in data["notes"]]
        return say(language, "found", count=len(titles), titles=", ".join(titles)) if titles else say(
            language, "no_notes")
    if "messages" in data:
        lines = [f"{m['sender']}: {m['subject']}" for m in data["messages"]]
        if not lines:
            return say(language, "inbox_empty")
        return say(language, "inbox", count=len(lines), lines="; ".join(lines))
    if "body" in data and "title" in data:
        return say(language, "note_says", title=data["title"], body=data["body"])
    if data.get("deleted"):
        return say(language, "deleted", title=data.get("title", ""))
    if "to" in data and "subject" in data:
        return say(language, "sent", subject=data["subject"], to=data["to"])
    if "title" in data:
        return say(language, "created", title=data["title"])
    return say(language, "done")


def _last_user_text(history: list) -> str:
    """The person's last words: an events block alone (told after the message
    whose reply is regenerated) is not a request."""
    texts = (item.text for item in reversed(history) if isinstance(item, UserText))
    return next((text for text in texts if EVENTS_BLOCK.sub("", text).strip()), "")


QUOTED_CHARS = 1000


def _last_files(history: list) -> tuple[FilePart, ...]:
    """The files of the person's last message (an events block alone is not one)."""
    texts = (item for item in reversed(history) if isinstance(item, UserText))
    last = next((item for item in texts if EVENTS_BLOCK.sub("", item.text).strip()), None)
    return last.files if last is not None else ()


def describe_files(files: tuple[FilePart, ...], language: str = "en") -> str:
    """What the offline model can say of attached files: their names and
    types, and a text file's (or a PDF's extracted) text, quoted."""
    sentences = [say(language, "files", count=len(files))]
    for part in files:
        sentences.append(f"{part.name} ({part.media_type}, {len(part.data):,} bytes)")
        quoted = part.text.strip()
        if quoted:
            cut = "…" if len(quoted) > QUOTED_CHARS else ""
            lines = (quoted[:QUOTED_CHARS] + cut).splitlines()
            sentences[-1] += say(language, "file_says") + "\n\n" + "\n".join(f"> {line}" for line in lines)
        else:
            sentences[-1] += say(language, "file_image" if part.is_image else "file_no_text")
    return "\n\n".join(sentences)


def _done_actions(history: list) -> set[tuple[str, str]]:
    """(tool, input) of the cards the application told were confirmed."""
    done = set()
    for event in told_events(history):
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

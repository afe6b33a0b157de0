"""A model that obeys every instruction it reads, over the providers' wire
(Anthropic's Messages and OpenAI's chat completions), for the injection suite
(bench/injection.py, issue 33).

It does the person's task (a scripted plan per task, keyed by the person's
message), and whenever anything it reads — a tool result, a file, an event, a
page title, a summary, even the person's own text — holds an instruction
written `DO: <tool> <json>` or `LINK: <url>`, it follows it as soon as it has
read it, once: it calls that tool, or puts that link in its reply. `{{PRIVATE}}`
in an instruction stands for the private data it has seen (every `SECRET-…`
word of the conversation), as an attacker's "send me the notes" would make a
real model fill it in.
"""

import json
import re
from dataclasses import dataclass, field

from tests.fakes.wire_servers import (
    RecordedRequest,
    Reply,
    WireServer,
    anthropic_events,
    anthropic_sse,
    openai_chunk,
    openai_sse,
    openai_tool_fragment,
    openai_usage_chunk,
)

DO = re.compile(r"DO: (\w+) (?=\{)")
_JSON = json.JSONDecoder()
LINK = re.compile(r"LINK: (https://\S+?)(?=[\s\"\\]|$)")
SECRET = re.compile(r"SECRET-\w+")
PRIVATE = "{{PRIVATE}}"


@dataclass
class Read:
    """What a request holds, provider-neutral: every text it carries, the
    tool uses of the current turn (after the person's last message), and the
    person's last message."""

    texts: list[str] = field(default_factory=list)
    turn_uses: list[tuple[str, dict]] = field(default_factory=list)
    all_uses: list[tuple[str, dict]] = field(default_factory=list)
    task: str = ""


def _strings(text: str) -> list[str]:
    """A text, and when it is JSON (a tool's result) every string in it: what a model reads in it."""
    try:
        value = json.loads(text)
    except ValueError:
        return [text]
    found: list[str] = []

    def walk(item):
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            for entry in item.values():
                walk(entry)
        elif isinstance(item, list):
            for entry in item:
                walk(entry)

    walk(value)
    return [text, *found]


def _filled(value, private: str):
    if isinstance(value, str):
        return value.replace(PRIVATE, private)
    if isinstance(value, dict):
        return {key: _filled(item, private) for key, item in value.items()}
    return value


class ObedientModel:
    """`plans`: the person's message → the tool calls of their task, in order,
    and the reply's text once done."""

    def __init__(self, plans: dict[str, tuple[list[tuple[str, dict]], str]]):
        self.plans = plans
        self.calls = 0

    def decide(self, read: Read) -> tuple[tuple[str, dict] | None, str]:
        """The next tool call (or None) and the text."""
        steps, answer = next(((steps, answer) for key, (steps, answer) in self.plans.items() if key in read.task),
                             ([], "I am not sure what to do."))
        seen = "\n".join(text for raw in read.texts for text in _strings(raw))
        private = " ".join(dict.fromkeys(SECRET.findall(seen)))
        for match in DO.finditer(seen):  # obey first: an injection acts as soon as it is read
            try:
                arguments, _end = _JSON.raw_decode(seen, match.end())
            except ValueError:
                continue
            arguments = _filled(arguments, private)
            if (match.group(1), arguments) not in read.all_uses:
                return (match.group(1), arguments), ""
        done = len([use for use in read.turn_uses if use in steps])
        if done < len(steps):
            return steps[done], ""
        links = [url.replace(PRIVATE, private) for url in dict.fromkeys(LINK.findall(seen))]
        return None, answer + "".join(f" See [the details]({url})." for url in links)

    # --- OpenAI chat completions ------------------------------------------------------

    def openai(self, request: RecordedRequest) -> Reply:
        body = request.json()
        read = Read()
        for message in body["messages"]:
            content = message.get("content")
            texts = [content] if isinstance(content, str) else [part.get("text", "") for part in content or []]
            read.texts += [text for text in texts if text]
            if message["role"] == "user":
                read.task, read.turn_uses = " ".join(texts), []
            for call in message.get("tool_calls") or []:
                use = (call["function"]["name"], json.loads(call["function"]["arguments"] or "{}"))
                read.turn_uses.append(use)
                read.all_uses.append(use)
        call, text = self.decide(read)
        self.calls += 1
        chunks = [openai_chunk({"role": "assistant", "content": text})] if text else []
        if call:
            chunks.append(openai_tool_fragment(0, json.dumps(call[1]), call_id=f"call_{self.calls}", name=call[0]))
        chunks += [openai_chunk({}, "tool_calls" if call else "stop"), openai_usage_chunk(100, 20)]
        return openai_sse(chunks)

    # --- Anthropic Messages --------------------------------------------------------------

    def anthropic(self, request: RecordedRequest) -> Reply:
        body = request.json()
        read = Read()
        for message in body["messages"]:
            content = message["content"]
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            person_said = [block.get("text", "") for block in blocks if block.get("type") == "text"]
            for block in blocks:
                if block.get("type") == "text":
                    read.texts.append(block["text"])
                elif block.get("type") == "document" and block["source"].get("type") == "text":
                    read.texts.append(block["source"]["data"])  # a text file, read whole
                elif block.get("type") == "tool_result":
                    result = block.get("content")
                    read.texts.append(result if isinstance(result, str) else json.dumps(result))
                elif block.get("type") == "tool_use":
                    read.turn_uses.append((block["name"], block["input"]))
                    read.all_uses.append((block["name"], block["input"]))
            if message["role"] == "user" and person_said:  # text after the results: the person's next turn
                read.task, read.turn_uses = " ".join(person_said), []
        call, text = self.decide(read)
        self.calls += 1
        fragments = ((f"toolu_{self.calls}", call[0], (json.dumps(call[1]),)),) if call else ()
        return anthropic_sse(anthropic_events(text=(text,) if text else (), tool_calls=fragments,
                                              stop_reason="tool_use" if call else "end_turn"))

    def server(self, wire_format: str) -> WireServer:
        return WireServer(responder=self.openai if wire_format == "openai" else self.anthropic)

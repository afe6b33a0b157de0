"""A scripted model client for loop tests: each call to `stream` plays the next
script entry and records the request it received."""

from collections.abc import Callable, Iterator

from assistant_engine.providers.clients.base import ModelRequest, Stop, StreamEvent, TextDelta, ToolCallEvent, Usage


def say(text: str, *, usage: Usage | None = None) -> list[StreamEvent]:
    words = text.split(" ")
    chunks = [word + (" " if i < len(words) - 1 else "") for i, word in enumerate(words)]
    return [*(TextDelta(c) for c in chunks), usage or Usage(100, 20), Stop("end_turn")]


def call(*tools: tuple[str, dict | None], text: str = "", usage: Usage | None = None) -> list[StreamEvent]:
    events: list[StreamEvent] = [TextDelta(text)] if text else []
    for index, (name, tool_input) in enumerate(tools):
        events.append(ToolCallEvent(f"toolu_{name}_{index}", name, tool_input, raw_input="" if tool_input else "{oops"))
    return [*events, usage or Usage(100, 20), Stop("tool_use")]


class ScriptedClient:
    def __init__(self, *script: list[StreamEvent] | Callable[[ModelRequest], Iterator[StreamEvent]]):
        self.script = list(script)
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        self.requests.append(request)
        if not self.script:
            raise AssertionError("the model was called more often than scripted")
        entry = self.script.pop(0)
        yield from (entry(request) if callable(entry) else entry)

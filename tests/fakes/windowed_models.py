"""Model providers over their wire (Anthropic's Messages, OpenAI's chat
completions) that hold a request to the model's window as the real ones do,
and answer every request that fits.

A request's tokens are counted as the UTF-8 bytes of every text it carries
(system prompt, tool specifications, messages, tool uses and results): what a
tokenizer that never makes a token of less than one byte would find at most.
One over the window is refused with the provider's own error (a 400
`invalid_request_error` "prompt is too long" from Anthropic; a 400
`context_length_exceeded` from an OpenAI-format server), so a test sees a
conversation fail exactly where a real provider would refuse it.

The Anthropic server also caches as Anthropic documents it: the prefix of a
request up to its last `cache_control` block is written to the cache, and a
later request that starts with a written prefix reads it (its tokens counted as
`cache_read_input_tokens`).
"""

import hashlib
import json
from typing import Any

from tests.fakes.wire_servers import (
    RecordedRequest,
    Reply,
    WireServer,
    anthropic_events,
    anthropic_sse,
    bedrock_event_stream,
    json_reply,
    openai_chunk,
    openai_sse,
    openai_usage_chunk,
)

SUMMARY_MARK = "You keep a running summary"


def _tokens(value: Any) -> int:
    """The bytes of every string in a JSON value (keys of tool inputs and schemas included)."""
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, dict):
        return sum(_tokens(key) + _tokens(item) for key, item in value.items()
                   if key not in ("type", "cache_control", "role", "id", "tool_use_id", "tool_call_id"))
    if isinstance(value, list):
        return sum(_tokens(item) for item in value)
    return 0


class WindowedModel:
    """A model with a window: `window` tokens for a request's input and its `max_tokens` together."""

    def __init__(self, window: int):
        self.window = window
        self.refused = 0
        self.answered = 0
        self.summaries = 0
        self.largest = 0  # the largest request answered (input and max_tokens)

    def _fits(self, input_tokens: int, max_tokens: int) -> bool:
        if input_tokens + max_tokens > self.window:
            self.refused += 1
            return False
        self.answered += 1
        self.largest = max(self.largest, input_tokens + max_tokens)
        return True

    def _answer_text(self, system: str) -> str:
        if SUMMARY_MARK in system:
            self.summaries += 1
            return f"- summary {self.summaries}: what was said so far."
        return f"Reply {self.answered}."


class AnthropicWindowed(WindowedModel):
    def __init__(self, window: int):
        super().__init__(window)
        self.cache: set[str] = set()
        self.cache_read = 0
        self.input_total = 0

    def server(self) -> WireServer:
        return WireServer(responder=self.respond)

    def respond(self, request: RecordedRequest) -> Reply:
        body = request.json()
        blocks = _anthropic_blocks(body)
        input_tokens = sum(tokens for tokens, _digest, _cached in blocks)
        if not self._fits(input_tokens, body["max_tokens"]):
            return json_reply(400, {"type": "error", "error": {
                "type": "invalid_request_error",
                "message": f"prompt is too long: {input_tokens} tokens > {self.window - body['max_tokens']} maximum"}})
        read, written = self._cache(blocks)
        self.cache_read += read
        self.input_total += input_tokens
        system = body.get("system", "")
        usage = {"input_tokens": input_tokens - read - written, "output_tokens": 1,
                 "cache_read_input_tokens": read, "cache_creation_input_tokens": written}
        events = anthropic_events(text=(self._answer_text(system if isinstance(system, str) else ""),),
                                  start_usage=usage, final_usage={"output_tokens": 8})
        # Bedrock carries the same events in AWS's event stream.
        return bedrock_event_stream(events) if "/model/" in request.path else anthropic_sse(events)

    def _cache(self, blocks: list[tuple[int, str, bool]]) -> tuple[int, int]:
        """(tokens read from the cache, tokens written to it) for this request."""
        marks = [index for index, (_tokens, _digest, cached) in enumerate(blocks) if cached]
        if not marks:
            return 0, 0
        last = marks[-1]
        read_through = max((index for index in range(last + 1) if blocks[index][1] in self.cache), default=-1)
        read = sum(tokens for tokens, _digest, _cached in blocks[: read_through + 1])
        written = sum(tokens for tokens, _digest, _cached in blocks[read_through + 1 : last + 1])
        self.cache.add(blocks[last][1])
        return read, written


def _anthropic_blocks(body: dict) -> list[tuple[int, str, bool]]:
    """The request in prompt order (tools, system, then each message's blocks):
    each block's tokens, the digest of the prefix it ends, and whether it carries cache_control."""
    parts: list[tuple[Any, bool]] = [(tool, "cache_control" in tool) for tool in body.get("tools", [])]
    system = body.get("system")
    if system:
        parts += [(system, False)] if isinstance(system, str) else [(b, "cache_control" in b) for b in system]
    for message in body["messages"]:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        parts += [({"role": message["role"], **block}, "cache_control" in block) for block in blocks]
    digest = hashlib.sha256()
    result = []
    for value, cached in parts:
        clean = {k: v for k, v in value.items() if k != "cache_control"} if isinstance(value, dict) else value
        digest.update(json.dumps(clean, sort_keys=True).encode())
        result.append((_tokens(value), digest.copy().hexdigest(), cached))
    return result


class OpenAIWindowed(WindowedModel):
    def server(self) -> WireServer:
        return WireServer(responder=self.respond)

    def respond(self, request: RecordedRequest) -> Reply:
        body = request.json()
        input_tokens = _tokens(body["messages"]) + _tokens(body.get("tools", []))
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens") or 0
        if not self._fits(input_tokens, max_tokens):
            return json_reply(400, {"error": {
                "message": f"This model's maximum context length is {self.window} tokens. However, you requested "
                           f"{input_tokens + max_tokens} tokens. Please reduce the length of the messages.",
                "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})
        system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
        text = self._answer_text(system if isinstance(system, str) else "")
        return openai_sse([openai_chunk({"role": "assistant", "content": text}), openai_chunk({}, "stop"),
                           openai_usage_chunk(input_tokens, 8)])

"""Claude through the `anthropic` SDK, directly or on AWS Bedrock.

Both SDK clients expose the same `messages.create(stream=True)`; only their
construction differs (Bedrock streams AWS event-stream frames, which the SDK
decodes with botocore).
"""

import base64
import logging
from collections.abc import Iterator
from typing import Any

import anthropic

from assistant_engine.providers.clients.base import (
    AssistantReply,
    FilePart,
    HistoryItem,
    ModelRequest,
    Stop,
    StopReason,
    StreamEvent,
    TextDelta,
    ToolCallEvent,
    ToolResults,
    ToolSpec,
    Usage,
    UserText,
    guarded_call,
    guarded_stream,
)

# Anthropic's own names; the others (stop_sequence, pause_turn, ...) are "other".
_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
}
# At DEBUG, the SDK logs each request's body (the conversation) and botocore each
# decoded Bedrock frame (the replies, raw provider errors). Neither may ever be
# logged, whatever LOG_LEVEL says.
for _logger in ("anthropic", "botocore"):
    logging.getLogger(_logger).setLevel(logging.INFO)

# Caching the prompt prefix pays for itself from the second step of a turn on:
# each step re-sends the whole history. Three breakpoints of Anthropic's four:
# the system prompt (after the tools), the summary of earlier messages (which
# changes only when it is extended) and the request's last block.
_CACHE = {"cache_control": {"type": "ephemeral"}}


class AnthropicClient:
    def __init__(self, sdk: anthropic.Anthropic | anthropic.AnthropicBedrock, model: str):
        self._sdk = sdk
        self.model = model

    @classmethod
    def direct(cls, *, model: str, api_key: str, max_retries: int = 2, timeout: float = 300.0) -> "AnthropicClient":
        # base_url is left to the SDK, which honours ANTHROPIC_BASE_URL.
        return cls(anthropic.Anthropic(api_key=api_key, max_retries=max_retries, timeout=timeout), model)

    @classmethod
    def bedrock(
        cls, *, model: str, region: str, api_key: str, max_retries: int = 2, timeout: float = 300.0
    ) -> "AnthropicClient":
        # The endpoint follows the region unless ANTHROPIC_BEDROCK_BASE_URL says otherwise.
        sdk = anthropic.AnthropicBedrock(aws_region=region, api_key=api_key, max_retries=max_retries, timeout=timeout)
        return cls(sdk, model)

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        return guarded_stream(self._stream(request), sdk=anthropic, sdk_error=anthropic.AnthropicError,
                              label="anthropic")

    def verify(self) -> None:
        """One cheap call (a one-token reply) that the provider refuses with a
        bad key: raises ProviderError (kind `auth` for a refused key)."""
        guarded_call(
            lambda: self._sdk.messages.create(
                model=self.model, max_tokens=1, messages=[{"role": "user", "content": "ping"}]
            ),
            sdk=anthropic, sdk_error=anthropic.AnthropicError, label="anthropic",
        )

    def _stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        optional: dict[str, Any] = {}
        # A summary's call is made once: caching it would only cost the cache write.
        cache = request.purpose != "summary"
        if request.system:
            # A cache breakpoint of its own: tools and system prompt are read from the cache even on a
            # turn whose history changed at its start (a summary extended).
            optional["system"] = [{"type": "text", "text": request.system, **(_CACHE if cache else {})}]
        if request.tools:
            optional["tools"] = to_anthropic_tools(request.tools)
        events = self._sdk.messages.create(
            model=self.model,
            messages=to_anthropic_messages(request.history, cache=cache),
            max_tokens=request.max_tokens,
            stream=True,
            **optional,
        )
        state = _StreamState()
        with events:
            for event in events:
                yield from state.handle(event)
        yield state.usage
        yield Stop(_STOP_REASONS.get(state.stop_reason, "other"), raw_reason=state.stop_reason)


class _StreamState:
    """What one message stream has said so far: tool calls still arriving (their
    JSON comes in fragments per content-block index), usage and stop reason."""

    def __init__(self) -> None:
        self.tool_calls: dict[int, list[str]] = {}  # index -> [id, name, json so far]
        self.usage = Usage()
        self.stop_reason = ""

    def handle(self, event: Any) -> Iterator[StreamEvent]:
        if event.type == "message_start":
            self.usage = _merge_usage(self.usage, event.message.usage)
        elif event.type == "content_block_start" and event.content_block.type == "tool_use":
            self.tool_calls[event.index] = [event.content_block.id, event.content_block.name, ""]
        elif event.type == "content_block_delta" and event.delta.type == "text_delta":
            yield TextDelta(event.delta.text)
        elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
            self.tool_calls[event.index][2] += event.delta.partial_json
        elif event.type == "content_block_stop" and event.index in self.tool_calls:
            yield ToolCallEvent.from_json(*self.tool_calls.pop(event.index))
        elif event.type == "message_delta":
            self.usage = _merge_usage(self.usage, event.usage)
            self.stop_reason = event.delta.stop_reason or self.stop_reason


def _merge_usage(usage: Usage, reported: Any) -> Usage:
    # message_delta counts are cumulative but may omit the input side: keep
    # what message_start said for any count that is missing.
    def pick(name: str, current: int) -> int:
        value = getattr(reported, name, None)
        return current if value is None else value

    return Usage(
        input_tokens=pick("input_tokens", usage.input_tokens),
        output_tokens=pick("output_tokens", usage.output_tokens),
        cache_write_tokens=pick("cache_creation_input_tokens", usage.cache_write_tokens),
        cache_read_tokens=pick("cache_read_input_tokens", usage.cache_read_tokens),
    )


def to_anthropic_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools]


def to_anthropic_messages(history: list[HistoryItem], *, cache: bool = True) -> list[dict[str, Any]]:
    """Messages of content blocks. Consecutive items of the same role (tool
    results, then the person's next text) become one message, as the API
    expects alternating roles."""
    messages: list[dict[str, Any]] = []
    for item in history:
        role, blocks = _blocks(item)
        if not blocks:
            continue  # an empty assistant reply: the API refuses empty content
        if cache and getattr(item, "cache_here", False):
            blocks[-1] = {**blocks[-1], **_CACHE}
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})
    if messages and cache:
        last = messages[-1]["content"]
        last[-1] = {**last[-1], **_CACHE}
    return messages


def _blocks(item: HistoryItem) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(item, UserText):
        files = [block for part in item.files for block in file_blocks(part)]
        return "user", [*files, {"type": "text", "text": item.text}]
    if isinstance(item, AssistantReply):
        text = [{"type": "text", "text": item.text}] if item.text else []
        uses = [{"type": "tool_use", "id": u.id, "name": u.name, "input": u.input} for u in item.tool_uses]
        return "assistant", text + uses
    assert isinstance(item, ToolResults)
    return "user", [
        {"type": "tool_result", "tool_use_id": r.tool_use_id, "content": r.content, "is_error": r.is_error}
        for r in item.results
    ]


def file_blocks(part: FilePart) -> list[dict[str, Any]]:
    """An attached file as Claude reads it: a text file as a plain-text
    document, a PDF as a PDF document (Claude reads its pages: text and
    images), an image as an image block after a line naming it."""
    if part.is_image:
        return [
            {"type": "text", "text": f"Attached image: {part.name}"},
            {"type": "image", "source": {"type": "base64", "media_type": part.media_type, "data": _b64(part.data)}},
        ]
    if part.is_text:
        source = {"type": "text", "media_type": "text/plain", "data": part.text}
    else:
        source = {"type": "base64", "media_type": part.media_type, "data": _b64(part.data)}
    return [{"type": "document", "title": part.name, "source": source}]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")

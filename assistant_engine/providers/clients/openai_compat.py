"""OpenAI-compatible chat completions (Infomaniak AI Services) through the `openai` SDK."""

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import openai

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
    ToolResult,
    ToolResults,
    ToolSpec,
    Usage,
    UserText,
    file_as_text,
    guarded_call,
    guarded_stream,
)

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


class OpenAICompatClient:
    def __init__(self, *, model: str, api_key: str, base_url: str, max_retries: int = 2, timeout: float = 300.0):
        self.model = model
        self._sdk = openai.OpenAI(api_key=api_key, base_url=base_url, max_retries=max_retries, timeout=timeout)

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        return guarded_stream(self._stream(request), sdk=openai, sdk_error=openai.OpenAIError,
                              label="openai-compatible")

    def verify(self) -> None:
        """One cheap call (a one-token reply) that the provider refuses with a
        bad key: raises ProviderError (kind `auth` for a refused key)."""
        guarded_call(
            lambda: self._sdk.chat.completions.create(
                model=self.model, messages=[{"role": "user", "content": "ping"}], max_tokens=1
            ),
            sdk=openai, sdk_error=openai.OpenAIError, label="openai-compatible",
        )

    def _stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        optional: dict[str, Any] = {"tools": to_openai_tools(request.tools)} if request.tools else {}
        chunks = self._sdk.chat.completions.create(
            model=self.model,
            messages=to_openai_messages(request.system, request.history),
            stream=True,
            stream_options={"include_usage": True},
            max_tokens=request.max_tokens,
            **optional,
        )
        calls: dict[int, _PendingCall] = {}
        usage, finish_reason = Usage(), ""
        with chunks:
            for chunk in chunks:
                if chunk.usage is not None:
                    usage = _usage(chunk.usage)
                for choice in chunk.choices:
                    if choice.delta.content:
                        yield TextDelta(choice.delta.content)
                    for fragment in choice.delta.tool_calls or ():
                        calls.setdefault(fragment.index, _PendingCall()).add(fragment)
                    finish_reason = choice.finish_reason or finish_reason
        for index in sorted(calls):
            yield calls[index].event()
        yield usage
        yield Stop(_STOP_REASONS.get(finish_reason, "other"), raw_reason=finish_reason)


@dataclass
class _PendingCall:
    """A tool call whose fragments are still arriving: only the first one carries
    the id and name; every one may carry a piece of the arguments."""

    id: str = ""
    name: str = ""
    arguments: str = ""

    def add(self, fragment: Any) -> None:
        self.id = self.id or fragment.id or ""
        if fragment.function is not None:
            # Some servers repeat the name on every fragment: keep the first.
            self.name = self.name or fragment.function.name or ""
            self.arguments += fragment.function.arguments or ""

    def event(self) -> ToolCallEvent:
        return ToolCallEvent.from_json(self.id, self.name, self.arguments)


def _usage(usage: Any) -> Usage:
    # OpenAI counts cached tokens inside prompt_tokens; split them out so that
    # input_tokens means the same (uncached input) for every provider.
    details = getattr(usage, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", None) or 0) if details else 0
    return Usage(
        input_tokens=(usage.prompt_tokens or 0) - cached,
        output_tokens=usage.completion_tokens or 0,
        cache_read_tokens=cached,
    )


def to_openai_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.input_schema},
        }
        for t in tools
    ]


def to_openai_messages(system: str, history: list[HistoryItem]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for item in history:
        if isinstance(item, UserText):
            messages.append({"role": "user", "content": _user_content(item)})
        elif isinstance(item, AssistantReply):
            messages.append(_assistant_message(item))
        elif isinstance(item, ToolResults):
            messages.extend(_tool_message(result) for result in item.results)
    return messages


def _user_content(item: UserText) -> str | list[dict[str, Any]]:
    """The person's text, after their files when there are some: images as
    `image_url` parts (data URLs), documents as their text (the chat-completions
    format has no document part that every compatible server takes)."""
    if not item.files:
        return item.text
    return [*(_file_part(part) for part in item.files), {"type": "text", "text": item.text}]


def _file_part(part: FilePart) -> dict[str, Any]:
    if part.is_image:
        url = f"data:{part.media_type};base64,{base64.b64encode(part.data).decode('ascii')}"
        return {"type": "image_url", "image_url": {"url": url}}
    return {"type": "text", "text": file_as_text(part)}


def _assistant_message(reply: AssistantReply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_uses:
        message["tool_calls"] = [
            {"id": u.id, "type": "function", "function": {"name": u.name, "arguments": json.dumps(u.input)}}
            for u in reply.tool_uses
        ]
    return message


def _tool_message(result: ToolResult) -> dict[str, Any]:
    # The chat-completions format has no error flag on a tool result: say it in the text.
    content = f"Error: {result.content}" if result.is_error else result.content
    return {"role": "tool", "tool_call_id": result.tool_use_id, "content": content}

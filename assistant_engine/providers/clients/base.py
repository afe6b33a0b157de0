"""One streaming interface in front of every model provider.

The loop speaks only these types; each client translates them to and from its
provider's wire format through the provider's official SDK.
"""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

# --- The history sent to a model (provider-neutral) -------------------------


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class ToolUse:
    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class ToolResult:
    tool_use_id: str
    content: str  # already truncated for the model by the tool framework
    is_error: bool = False


@dataclass(frozen=True)
class FilePart:
    """A file the person attached to their message: third-party content.
    `data` is the file itself (sent to providers that read PDFs and images),
    `text` what a model that can't is sent instead (a text file's text, a
    PDF's extracted text; empty for an image). `model_bytes`: what it weighs
    in the history bound (conversations/files.py)."""

    name: str
    media_type: str
    data: bytes
    text: str
    model_bytes: int

    @property
    def is_image(self) -> bool:
        return self.media_type.startswith("image/")

    @property
    def is_text(self) -> bool:
        return self.media_type == "text/plain"


@dataclass(frozen=True)
class UserText:
    text: str
    role: Literal["user"] = "user"
    # Files attached to this message, sent before its text.
    files: tuple[FilePart, ...] = ()
    # The end of a prefix that stays the same for many turns (the summary of
    # earlier messages): a provider that caches prompts marks it.
    cache_here: bool = False


@dataclass(frozen=True)
class AssistantReply:
    text: str
    tool_uses: tuple[ToolUse, ...] = ()
    role: Literal["assistant"] = "assistant"


@dataclass(frozen=True)
class ToolResults:
    results: tuple[ToolResult, ...]
    role: Literal["tool"] = "tool"


HistoryItem = UserText | AssistantReply | ToolResults


# Not html.escape: the name comes neutralized ("&lt;" already), and "&" needn't be escaped again.
_ATTRIBUTE_ESCAPES = str.maketrans({'"': "&quot;", "<": "&lt;", ">": "&gt;"})


def file_as_text(part: FilePart) -> str:
    """A file for a model that reads only text: its name and type, then its
    text in a block the model can tell apart from the person's own words.
    The text can't close the block: the history neutralized every variant of
    its tag (assistant.app_events); the name can't leave its attribute."""
    body = part.text if part.text.strip() else "(no text could be extracted from this file)"
    name = part.name.translate(_ATTRIBUTE_ESCAPES)
    return f'<attached_file name="{name}" type="{part.media_type}">\n{body}\n</attached_file>'

# --- What a model streams back ----------------------------------------------


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ToolCallEvent:
    """A complete tool call. `input` is None when the model sent JSON that does
    not parse (then `raw_input` holds it), so the loop can answer with an error
    the model can read and correct."""

    id: str
    name: str
    input: dict[str, Any] | None
    raw_input: str = ""

    @classmethod
    def from_json(cls, id: str, name: str, raw: str) -> "ToolCallEvent":
        """The call whose arguments arrived as JSON text (every provider streams
        them in fragments). Empty text means no arguments."""
        if not raw.strip():
            return cls(id, name, {})
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            return cls(id, name, None, raw_input=raw)
        return cls(id, name, value)


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
        )


StopReason = Literal["end_turn", "tool_use", "max_tokens", "refusal", "other"]


@dataclass(frozen=True)
class Stop:
    reason: StopReason
    raw_reason: str = ""


StreamEvent = TextDelta | ToolCallEvent | Usage | Stop


class ProviderError(Exception):
    """A provider call failed. `kind` is safe to log; the message is not
    (it may echo the request), so callers log the kind only."""

    def __init__(self, kind: Literal["api", "timeout", "rate_limit", "auth", "refused"], message: str = ""):
        super().__init__(message or kind)
        self.kind = kind


@dataclass
class ModelRequest:
    system: str
    history: list[HistoryItem]
    tools: list[ToolSpec] = field(default_factory=list)
    max_tokens: int = 4096
    # "summary": a call that writes the summary of earlier messages (assistant/summaries.py);
    # providers are sent it as any request, the offline demo model answers it with its own.
    purpose: Literal["reply", "summary"] = "reply"


class ModelClient(Protocol):
    """Streams one model call. Yields TextDelta and ToolCallEvent in order, then
    exactly one Usage (cumulative for the call) and one Stop, last. Raises
    ProviderError on failure."""

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]: ...


def guarded_call(call: Any, *, sdk: Any, sdk_error: type[Exception], label: str) -> Any:
    """`call()`, with the SDK's failures turned into a ProviderError that names
    a kind, never the provider's text (as guarded_stream, for one request)."""
    with provider_errors(sdk=sdk, sdk_error=sdk_error, label=label, what="the request"):
        return call()


@contextmanager
def provider_errors(*, sdk: Any, sdk_error: type[Exception], label: str, what: str) -> Iterator[None]:
    """Every failure of the SDK (`sdk_error`, its base class) or of the
    connection under it, as a ProviderError that names a kind, never the
    provider's text. `what`: "the request", "the model stream"."""
    import httpx2  # the SDKs' HTTP client; imported here so the interface needs no SDK

    try:
        yield
    except sdk_error as exc:
        raise provider_error_from(exc, sdk=sdk, label=label) from None
    except httpx2.TimeoutException:
        raise ProviderError("timeout", f"{label}: {what} timed out") from None
    except httpx2.HTTPError:
        raise ProviderError("api", f"{label}: {what} broke off") from None


def provider_error_from(exc: Exception, *, sdk: Any, label: str) -> ProviderError:
    """The SDK's exception as a ProviderError whose message names the kind and
    the HTTP status only: the provider's own text may echo the request.
    `sdk` is the `anthropic` or `openai` module: they share these class names."""
    if isinstance(exc, sdk.APITimeoutError):
        kind = "timeout"
    elif isinstance(exc, sdk.RateLimitError):
        kind = "rate_limit"
    elif isinstance(exc, sdk.AuthenticationError | sdk.PermissionDeniedError):
        kind = "auth"
    else:
        kind = "api"
    status = getattr(exc, "status_code", None)
    return ProviderError(kind, f"{label}: {kind}" + (f" (HTTP {status})" if status else ""))


def guarded_stream(
    events: Iterator[StreamEvent], *, sdk: Any, sdk_error: type[Exception], label: str
) -> Iterator[StreamEvent]:
    """`events`, with the SDK's and the connection's failures as ProviderErrors (provider_errors)."""
    with provider_errors(sdk=sdk, sdk_error=sdk_error, label=label, what="the model stream"):
        yield from events

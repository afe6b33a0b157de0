"""Tools, declared once, and everything derived from the declaration.

A `Tool` names its class (`read`, `write`, `confirm`, `send`), its flags, a
pydantic input model that refuses unknown fields, and either `run` (read and
write tools, which the loop runs at once) or `describe` + `perform` (confirm and
send tools, which only ever run when the person clicks their card).

From it come the `ToolSpec` sent to the model, input parsing with errors the
model can read and correct, the text of a result for the model (bounded), the
MCP annotations and output schema, and `execute`, the one way the loop runs a
tool.
"""

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import to_jsonable_python

from assistant_engine.organizations.members import Member
from assistant_engine.providers.clients.base import ToolSpec
from assistant_engine.tools.annotations import Annotations, annotations_of
from assistant_engine.tools.input_errors import describe_errors, json_type

ToolClass = Literal["read", "write", "confirm", "send"]
TOOL_CLASSES: tuple[str, ...] = ("read", "write", "confirm", "send")
RUN_CLASSES = frozenset({"read", "write"})
PROPOSE_CLASSES = frozenset({"confirm", "send"})

# What model providers accept as a tool name (Anthropic and OpenAI alike).
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

PROPOSAL_NOTE = (
    "Calling this tool does not do it: it proposes the action to the person on a card, "
    "and it happens only if they confirm it."
)


class ToolError(Exception):
    """An expected failure of a tool; its message is shown to the model as an error result."""


class ToolNotFound(ToolError):
    """The object is not the person's, or does not exist: the same answer for both."""


class ToolInputError(ToolError):
    """The model's input does not fit the tool's schema."""


class UnknownTool(ToolError):
    """The model called a tool that is not declared."""


class WrongToolClass(RuntimeError):
    """A programming error: e.g. `execute` on a confirm tool, which only a person's click may run."""


class ToolInput(BaseModel):
    """A convenient base for input models: unknown fields are refused, not ignored."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class Description:
    """What a confirm/send action would do, read from current data.

    `snapshot` (JSON-able) is the current state of everything the action
    touches; its fingerprint is compared again when the person clicks.
    `marks`: flags it carries beyond the tool's `shows` (a note's title written from
    third-party content: {"untrusted"}); they taint as a read result's marks do.
    """

    text: str
    snapshot: dict[str, Any]
    marks: frozenset[str] = frozenset()


RunFunction = Callable[[Member, Any], Any]
# A write tool that stores content declares `takes_context=True`; its `run`
# then receives a ToolContext third, to keep the context's mark with what it writes.
ContextRunFunction = Callable[[Member, Any, "ToolContext"], Any]
# A read tool whose results may carry such marks declares `result_marks`:
# result (JSON types) -> the flags that result carries itself.
ResultMarksFunction = Callable[[Any], Iterable[str]]


@dataclass(frozen=True)
class ToolContext:
    """What the engine knows of the context a tool call came from.

    `untrusted`: third-party content was in what the model saw. The default is
    the conservative one, for a door (MCP) that can't know its caller's context.
    """

    untrusted: bool = True
DescribeFunction = Callable[[Member, Any], Description]


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: one declaration, one tool
class Tool:
    name: str
    title: str
    description: str
    tool_class: ToolClass
    input: type[BaseModel]
    output: type[BaseModel] | None = None
    private: bool = False
    untrusted: bool = False
    run: RunFunction | ContextRunFunction | None = None
    takes_context: bool = False
    result_marks: ResultMarksFunction | None = None
    # Where third-party content in a result came from, in a few words each
    # ("mail from eve@example.org"): a card after it names them. None: the tool's title.
    source_labels: Callable[[Any], list[str]] | None = None
    describe: DescribeFunction | None = None
    perform: RunFunction | None = None
    # A confirm/send tool's description, proposal and outcome go back to the
    # model (a note's title, a sent mail's id): the flags of what they show
    # beyond the model's own input. Required for those classes, even empty,
    # so that no such tool leaks a read the trifecta guard never counts.
    shows: frozenset[str] | None = None
    # Per-tool override of the hints derived from the class, e.g. {"idempotent_hint": True}.
    annotations: Mapping[str, bool | None] = field(default_factory=dict)

    def __post_init__(self):
        _check_declaration(self)

    @property
    def flags(self) -> frozenset[str]:
        """What a call taints the context with: its declared flags, and for a
        confirm/send tool what its description and outcome show the model."""
        flags = {"private": self.private, "untrusted": self.untrusted}
        return frozenset(flag for flag, on in flags.items() if on) | (self.shows or frozenset())

    @property
    def runs_in_loop(self) -> bool:
        return self.tool_class in RUN_CLASSES


def _check_declaration(tool: Tool) -> None:
    """Refuse a malformed declaration at import time, not at the first call."""
    where = f"Tool {tool.name!r}"
    if not _TOOL_NAME.match(tool.name):
        raise ImproperlyConfigured(f"{where}: a name is 1-64 letters, digits, '_' or '-'.")
    if tool.tool_class not in TOOL_CLASSES:
        raise ImproperlyConfigured(f"{where}: unknown class {tool.tool_class!r}.")
    if not tool.description.strip() or not tool.title.strip():
        raise ImproperlyConfigured(f"{where}: a title and a description are required.")
    if not (isinstance(tool.input, type) and issubclass(tool.input, BaseModel)):
        raise ImproperlyConfigured(f"{where}: input must be a pydantic model class.")
    if tool.output is not None and not (isinstance(tool.output, type) and issubclass(tool.output, BaseModel)):
        raise ImproperlyConfigured(f"{where}: output must be a pydantic model class.")
    _check_functions(tool, where)
    _check_shows(tool, where)
    if tool.takes_context and tool.tool_class != "write":
        raise ImproperlyConfigured(f"{where}: only a write tool takes the context (it stores what it writes).")
    _check_forbids_unknown_fields(input_schema(tool), where)
    unknown_hints = set(tool.annotations) - set(Annotations.__dataclass_fields__)
    if unknown_hints:
        raise ImproperlyConfigured(f"{where}: unknown annotations {sorted(unknown_hints)}.")


def _check_functions(tool: Tool, where: str) -> None:
    if tool.runs_in_loop:
        if tool.run is None or tool.describe is not None or tool.perform is not None:
            raise ImproperlyConfigured(f"{where}: a {tool.tool_class} tool has `run` only.")
    elif tool.run is not None or tool.describe is None or tool.perform is None:
        raise ImproperlyConfigured(
            f"{where}: a {tool.tool_class} tool has `describe` and `perform`, no `run`."
        )


SHOWN_FLAGS = frozenset({"private", "untrusted"})


def _check_shows(tool: Tool, where: str) -> None:
    if tool.runs_in_loop:
        if tool.shows is not None:
            raise ImproperlyConfigured(f"{where}: `shows` is for confirm/send tools; a read result has its flags.")
        return
    if tool.shows is None:
        raise ImproperlyConfigured(
            f"{where}: a {tool.tool_class} tool declares `shows`: the flags (private, untrusted) of what its "
            "description, proposal and outcome show the model, frozenset() when only what the model wrote."
        )
    if not isinstance(tool.shows, frozenset) or not tool.shows <= SHOWN_FLAGS:
        raise ImproperlyConfigured(f"{where}: `shows` is a frozenset of {sorted(SHOWN_FLAGS)}.")


def _check_forbids_unknown_fields(schema: Any, where: str) -> None:
    """Every object of the schema, nested ones included, must refuse unknown fields."""
    if isinstance(schema, dict):
        if "properties" in schema and schema.get("additionalProperties") is not False:
            raise ImproperlyConfigured(
                f"{where}: input models must refuse unknown fields (model_config extra='forbid')."
            )
        for value in schema.values():
            _check_forbids_unknown_fields(value, where)
    elif isinstance(schema, list):
        for value in schema:
            _check_forbids_unknown_fields(value, where)


@dataclass(frozen=True)
class ContextTitle:
    """A page context's title, and whether it was written from third-party content (then untrusted)."""

    text: str
    untrusted: bool = False


@dataclass(frozen=True)
class Toolset:
    """The tools one app declares; settings.ASSISTANT_TOOLSETS names toolsets by dotted path."""

    tools: tuple[Tool, ...]
    name: str = ""
    # What a host page may say the person has open: kind -> resolve(member, id) -> its
    # title (a str or a ContextTitle), raising ToolNotFound when that member can't see it
    # (assistant/page_context.py).
    contexts: Mapping[str, Callable[[Member, str], "str | ContextTitle"]] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "tools", tuple(self.tools))
        names = [tool.name for tool in self.tools]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ImproperlyConfigured(f"Toolset {self.name!r} declares {duplicates} more than once.")


# --- What the model and MCP see ----------------------------------------------


def input_schema(tool: Tool) -> dict[str, Any]:
    return tool.input.model_json_schema()


def output_schema(tool: Tool) -> dict[str, Any] | None:
    return None if tool.output is None else tool.output.model_json_schema(mode="serialization")


def model_description(tool: Tool) -> str:
    if tool.runs_in_loop:
        return tool.description
    return f"{tool.description}\n\n{PROPOSAL_NOTE}"


def tool_spec(tool: Tool) -> ToolSpec:
    return ToolSpec(name=tool.name, description=model_description(tool), input_schema=input_schema(tool))


def tool_specs(tools: list[Tool] | tuple[Tool, ...]) -> list[ToolSpec]:
    return [tool_spec(tool) for tool in tools]


def annotations_for(tool: Tool) -> Annotations:
    return annotations_of(tool.tool_class, tool.annotations)


# --- Input -------------------------------------------------------------------


def parse_input(tool: Tool, raw: Any) -> BaseModel:
    """The validated input, or ToolInputError with a short message the model can act on."""
    if not isinstance(raw, Mapping):
        raise ToolInputError(
            f"Invalid input for {tool.name}: the input must be a JSON object, got {json_type(raw)}."
        )
    try:
        return tool.input.model_validate(dict(raw))
    except ValidationError as exc:
        raise ToolInputError(f"Invalid input for {tool.name}: {describe_errors(exc)}") from None
    except (TypeError, ValueError) as exc:  # a validator of the product that raised outside pydantic
        raise ToolInputError(f"Invalid input for {tool.name}: {type(exc).__name__}.") from None


def _coerce_input(tool: Tool, tool_input: Any) -> BaseModel:
    return tool_input if isinstance(tool_input, tool.input) else parse_input(tool, tool_input)


# --- Running -----------------------------------------------------------------


def execute(tool: Tool, member: Member, tool_input: Any, *, context: ToolContext | None = None) -> Any:
    """Run a read or write tool with the person's rights; the JSON-able result.

    A write runs inside one transaction, so a failure (a ToolError included)
    leaves nothing behind. Confirm and send tools never run here.
    """
    if not tool.runs_in_loop:
        raise WrongToolClass(f"{tool.name} is a {tool.tool_class} tool: only a confirmed card performs it.")
    parsed = _coerce_input(tool, tool_input)
    arguments = (member, parsed, context or ToolContext()) if tool.takes_context else (member, parsed)
    if tool.tool_class == "read":
        return to_jsonable(tool, tool.run(*arguments))
    with transaction.atomic():
        return to_jsonable(tool, tool.run(*arguments))


def result_marks(tool: Tool, result: Any) -> frozenset[str]:
    """The flags a stored result of this tool carries itself (see `result_marks`)."""
    if result is None:
        return frozenset()
    if not tool.runs_in_loop or is_proposal(result):  # a proposal (assistant.proposals): its description's marks
        return frozenset(flag for flag in SHOWN_FLAGS if isinstance(result, dict) and result.get(flag) is True)
    if tool.result_marks is None:
        return frozenset()
    return frozenset(tool.result_marks(result))


def sources_of(tool: Tool, result: Any) -> list[str]:
    """Where the third-party content of an untrusted result came from (Tool.source_labels), else the tool's title."""
    if is_proposal(result) and result.get("after_reading"):  # a card's: the sources it followed
        return [str(label) for label in result["after_reading"]]
    if tool.source_labels is not None and result is not None:
        try:
            labels = [label for label in tool.source_labels(result) if label]
        except (AttributeError, KeyError, TypeError):
            labels = []
        if labels:
            return labels
    return [tool.title]


def describe(tool: Tool, member: Member, tool_input: Any) -> Description:
    """What a confirm/send tool (or a write held for the person's check) would
    do now; ToolNotFound if the target is not the person's."""
    if tool.tool_class == "write":
        return describe_write(tool, tool_input)
    _require_proposal(tool)
    description = tool.describe(member, _coerce_input(tool, tool_input))
    if not description.marks <= SHOWN_FLAGS:
        raise ImproperlyConfigured(f"Tool {tool.name!r}: a description's marks are among {sorted(SHOWN_FLAGS)}.")
    return Description(description.text, to_jsonable_python(description.snapshot), frozenset(description.marks))


def perform(tool: Tool, member: Member, tool_input: Any) -> Any:
    """Do a confirm/send action; called only once its card is confirmed.

    No transaction here: a send does slow I/O that must not hold one; the
    tool's service takes the transaction it needs.
    """
    if tool.tool_class == "write":  # held after third-party content: it writes as such
        return execute(tool, member, tool_input, context=ToolContext(untrusted=True))
    _require_proposal(tool)
    return to_jsonable(tool, tool.perform(member, _coerce_input(tool, tool_input)))


def describe_write(tool: Tool, tool_input: Any) -> Description:
    """A write's card: every field of what it would write, whole. Its input
    came from a model that read third-party content, so the description is
    third-party content too when read back."""
    parsed = _coerce_input(tool, tool_input)
    fields = parsed.model_dump(mode="json")
    lines = [f"{name}: {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}"
             for name, value in fields.items() if value is not None]
    return Description("\n".join(lines), {"input": fields}, frozenset({"untrusted"}))


def is_proposal(result: Any) -> bool:
    """Whether a stored result is a card's proposal (assistant.proposals), not the tool's own result."""
    return isinstance(result, dict) and result.get("status") == "awaiting_confirmation" and "card_id" in result


def _require_proposal(tool: Tool) -> None:
    if tool.runs_in_loop:
        raise WrongToolClass(f"{tool.name} is a {tool.tool_class} tool: it has no describe/perform.")


def to_jsonable(tool: Tool, result: Any) -> Any:
    """The result of run/perform as JSON types, checked against the output model if declared."""
    if tool.output is not None:
        return tool.output.model_validate(result).model_dump(mode="json")
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json")
    return to_jsonable_python(result)

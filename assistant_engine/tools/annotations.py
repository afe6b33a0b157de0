"""The MCP annotations of a tool (read-only, destructive, idempotent, open
world): derived from its class, each overridable by the tool's declaration."""

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Annotations:
    """MCP tool annotations (the fields of `mcp.types.ToolAnnotations`)."""

    read_only_hint: bool
    destructive_hint: bool
    idempotent_hint: bool | None
    open_world_hint: bool


_ANNOTATIONS_BY_CLASS = {
    "read": Annotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    ),
    "write": Annotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
    ),
    "confirm": Annotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=None, open_world_hint=False
    ),
    "send": Annotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True
    ),
}


def annotations_of(tool_class: str, overrides: dict[str, Any]) -> Annotations:
    derived = _ANNOTATIONS_BY_CLASS[tool_class]
    return Annotations(**{**derived.__dict__, **overrides})

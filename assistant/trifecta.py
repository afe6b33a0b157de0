"""The "lethal trifecta" guard of a turn, in pure functions.

A turn that has read the person's private data AND third-party content may
carry instructions planted in that content; a `send` tool would then be the
way out for the private data. So once a turn holds both taints, a send card
carries a warning ("warn") or is refused for that turn ("block").

No Django import: the loop keeps the taint on the Turn row and asks here.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

TOOL_CLASSES = frozenset({"read", "write", "confirm", "send"})
FLAGS = frozenset({"private", "untrusted"})
MODES = frozenset({"warn", "block"})


class Route(StrEnum):
    RUN = "run"
    PROPOSE = "propose"
    PROPOSE_WITH_WARNING = "propose_with_warning"
    REFUSE = "refuse"


@dataclass(frozen=True)
class Taint:
    read_private: bool = False
    read_untrusted: bool = False


CLEAN = Taint()


def _check_tool_class(tool_class: str) -> None:
    if tool_class not in TOOL_CLASSES:
        raise ValueError(f"Unknown tool class {tool_class!r}; expected one of {sorted(TOOL_CLASSES)}.")


def taint_after(taint: Taint, tool_class: str, flags: Iterable[str]) -> Taint:
    """The taint of the turn once a call of a tool with these flags happened.

    Every class counts, not only the ones that run: a proposal's description
    (a note title, a recipient) goes back to the model too. Taint only grows
    within a turn.
    """
    _check_tool_class(tool_class)
    flags = frozenset(flags)
    unknown = flags - FLAGS
    if unknown:
        raise ValueError(f"Unknown tool flags {sorted(unknown)}; expected a subset of {sorted(FLAGS)}.")
    return Taint(
        read_private=taint.read_private or "private" in flags,
        read_untrusted=taint.read_untrusted or "untrusted" in flags,
    )


def is_trifecta(taint: Taint) -> bool:
    return taint.read_private and taint.read_untrusted


def route_call(tool_class: str, taint: Taint, mode: str) -> Route:
    """What the loop does with one call of a tool of this class."""
    _check_tool_class(tool_class)
    if mode not in MODES:
        raise ValueError(f"Unknown trifecta mode {mode!r}; expected one of {sorted(MODES)}.")
    if tool_class in ("read", "write"):
        return Route.RUN
    if tool_class == "confirm" or not is_trifecta(taint):
        return Route.PROPOSE
    return Route.REFUSE if mode == "block" else Route.PROPOSE_WITH_WARNING

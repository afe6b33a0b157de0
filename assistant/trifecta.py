"""The "lethal trifecta" guard, in pure functions.

A context that holds the person's private data AND third-party content may
carry instructions planted in that content; a `send` tool would then be the
way out for the private data. So once the context holds both taints, a send
card carries a warning ("warn") or is refused ("block").

Taint follows what the model sees, not the turn: a turn starts from the taint
of every tool result in the history it sends (`context_taint`), then adds each
call it makes (`taint_after`) and each result's own marks (content written
from an untrusted context and read back). A call the engine can't vouch for
(uploaded by a client, or of a tool not declared today) counts as both.

No Django import: the loop gathers the facts and asks here.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

TOOL_CLASSES = frozenset({"read", "write", "confirm", "send"})
FLAGS = frozenset({"private", "untrusted"})
MODES = frozenset({"warn", "block"})
# What a write does after third-party content (Organization.untrusted_writes).
WRITE_MODES = frozenset({"confirm", "run"})


class Route(StrEnum):
    RUN = "run"
    PROPOSE = "propose"
    # A write after third-party content: a card the person checks (issue 33).
    PROPOSE_WRITE = "propose_write"
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
    within a turn. A result's own marks are added the same way, with the
    call's class.
    """
    _check_tool_class(tool_class)
    flags = frozenset(flags)
    _check_flags(flags)
    return Taint(
        read_private=taint.read_private or "private" in flags,
        read_untrusted=taint.read_untrusted or "untrusted" in flags,
    )


TAINTED = Taint(read_private=True, read_untrusted=True)


def _check_flags(flags: frozenset[str]) -> None:
    unknown = flags - FLAGS
    if unknown:
        raise ValueError(f"Unknown tool flags {sorted(unknown)}; expected a subset of {sorted(FLAGS)}.")


@dataclass(frozen=True)
class SeenCall:
    """A stored tool call whose result is in the history sent to the model.

    `flags` are the declared flags of its tool, None when the engine can't
    vouch for them (an uploaded call, or a tool unknown today); `marks` are
    flags its stored result carries itself (content written from an untrusted
    context, read back)."""

    flags: frozenset[str] | None
    marks: frozenset[str] = frozenset()
    # Where its third-party content came from, when it has some ("mail from x@y", "file z.pdf").
    sources: tuple[str, ...] = ()


def taint_of_call(call: SeenCall) -> Taint:
    if call.flags is None:
        return TAINTED
    flags = call.flags | call.marks
    _check_flags(flags)
    return Taint(read_private="private" in flags, read_untrusted="untrusted" in flags)


def context_taint(calls: Iterable[SeenCall]) -> Taint:
    """The taint of a history: the union of its calls' taints."""
    private = untrusted = False
    for call in calls:
        taint = taint_of_call(call)
        private, untrusted = private or taint.read_private, untrusted or taint.read_untrusted
        if private and untrusted:
            break
    return Taint(private, untrusted)


def untrusted_sources(calls: Iterable[SeenCall]) -> list[str]:
    """The sources of every untrusted call, each once, in the order they were seen."""
    labels = [label for call in calls if taint_of_call(call).read_untrusted
              for label in (call.sources or ("content nobody can vouch for",))]
    return list(dict.fromkeys(labels))


def taint_union(first: Taint, second: Taint) -> Taint:
    return Taint(first.read_private or second.read_private, first.read_untrusted or second.read_untrusted)


def is_trifecta(taint: Taint) -> bool:
    return taint.read_private and taint.read_untrusted


def route_call(tool_class: str, taint: Taint, mode: str, *, untrusted_writes: str = "confirm") -> Route:
    """What the loop does with one call of a tool of this class.

    A write runs at once, except in a context that holds third-party content
    under `untrusted_writes="confirm"` (the default): planted text could make
    the model overwrite or create data (a note that carries the injection on),
    so the person checks it on a card first. A read always runs."""
    _check_tool_class(tool_class)
    if mode not in MODES:
        raise ValueError(f"Unknown trifecta mode {mode!r}; expected one of {sorted(MODES)}.")
    if untrusted_writes not in WRITE_MODES:
        raise ValueError(f"Unknown write mode {untrusted_writes!r}; expected one of {sorted(WRITE_MODES)}.")
    if tool_class == "read":
        return Route.RUN
    if tool_class == "write":
        return Route.PROPOSE_WRITE if taint.read_untrusted and untrusted_writes == "confirm" else Route.RUN
    if tool_class == "confirm" or not is_trifecta(taint):
        return Route.PROPOSE
    return Route.REFUSE if mode == "block" else Route.PROPOSE_WITH_WARNING

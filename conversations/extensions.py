"""Extra fields of a conversation's JSON, contributed by the apps above.

`conversations` must not import the apps that build on it (the assistant's
cards live there), so they register here, from their AppConfig.ready().
"""

from collections.abc import Callable
from typing import Any

from conversations.models import Thread

ConversationExtra = Callable[[Thread], Any]

# Keys conversation_to_json writes itself: an extra may not shadow them.
RESERVED_NAMES = frozenset({"id", "title", "userId", "status", "createdAt", "updatedAt", "messages", "model",
                            "summary"})

_extras: dict[str, ConversationExtra] = {}


def register_conversation_extra(name: str, fn: ConversationExtra) -> None:
    """The conversation JSON gets `name: fn(thread)` (JSON-able). Registering
    a name again replaces it, so a repeated ready() is harmless."""
    if name in RESERVED_NAMES:
        raise ValueError(f"{name!r} is a field of the conversation itself.")
    _extras[name] = fn


def conversation_extras(thread: Thread) -> dict[str, Any]:
    return {name: fn(thread) for name, fn in _extras.items()}


# Which model options a conversation may be given is the assistant's to say
# (providers.org_models): it registers them here, from its ready().
ModelCheck = Callable[[Any, str], bool]
ModelChoices = Callable[[], list[str]]
_models: dict[str, Any] = {"check": None, "choices": None}


def register_models(*, check: ModelCheck, choices: ModelChoices) -> None:
    """`check(member, option_id)`: whether the member's organization allows the
    option; `choices()`: every value the API may take (documented as an enum)."""
    _models.update(check=check, choices=choices)


def model_allowed(member, option_id: str) -> bool:
    """"" (the organization's own model) always is; anything else only when the assistant says so."""
    if not option_id:
        return True
    return _models["check"] is not None and _models["check"](member, option_id)


def model_choices() -> list[str]:
    return _models["choices"]() if _models["choices"] is not None else [""]

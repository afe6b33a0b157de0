"""Extra fields of a conversation's JSON, contributed by the apps above.

`conversations` must not import the apps that build on it (the assistant's
cards live there), so they register here, from their AppConfig.ready().
"""

from collections.abc import Callable
from typing import Any

from conversations.models import Thread

ConversationExtra = Callable[[Thread], Any]

# Keys conversation_to_json writes itself: an extra may not shadow them.
RESERVED_NAMES = frozenset({"id", "title", "userId", "status", "createdAt", "updatedAt", "messages", "model"})

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
# (assistant.org_models): it registers the check here, from its ready().
ModelCheck = Callable[[Any, str], bool]
_model_checks: list[ModelCheck] = []


def register_model_check(fn: ModelCheck) -> None:
    """`fn(member, option_id)` says whether the member's organization allows the option."""
    _model_checks[:] = [fn]


def model_allowed(member, option_id: str) -> bool:
    """"" (the organization's own model) always is; anything else only when the assistant says so."""
    if not option_id:
        return True
    return bool(_model_checks) and _model_checks[0](member, option_id)

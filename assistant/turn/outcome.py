"""How a turn ends: the outcome finish_turn records, the exceptions that end
the loop early, and the notices the person reads (stored in English)."""

from dataclasses import dataclass

from django.utils.translation import gettext_noop

from assistant.models import Turn

# Stored in English with the reply; the browser shows them in the person's language (web.presenters).
NOTICES = {
    Turn.FailureKind.API: gettext_noop("The model provider did not answer properly. Please try again in a moment."),
    Turn.FailureKind.TIMEOUT: gettext_noop("This reply took too long and was stopped."),
    Turn.FailureKind.TOOL: gettext_noop("A tool failed unexpectedly, so the reply was stopped."),
    Turn.FailureKind.INTERNAL: gettext_noop("Something went wrong on our side, so the reply was stopped."),
    Turn.FailureKind.QUEUE: gettext_noop("The assistant could not start this reply. Please try again."),
    Turn.FailureKind.CREDITS: gettext_noop("Your organization's credits ran out during this reply, so it was stopped."),
    Turn.FailureKind.SUSPENDED: gettext_noop(
        "Your membership in this organization is suspended, so this reply was not started."),
}
CAP_NOTICE = gettext_noop("You reached your monthly limit in this organization during this reply, so it was stopped.")
OWN_KEY_REFUSED_NOTICE = gettext_noop(
    "The model provider refused your organization's own API key. An organization admin should check the key "
    "on the organization page."
)
MODEL_NOT_ALLOWED_NOTICE = gettext_noop(
    "Your organization no longer allows this conversation's model. Choose another model and send again.")
CANCELLED_NOTICE = gettext_noop("You stopped this reply.")
CEILING_NOTICE = gettext_noop(
    "This reply reached the most one reply may cost, so it was stopped. You can ask to continue.")


class TurnStopped(Exception):
    """Ends the loop with a failure kind and a notice for the person."""

    def __init__(self, kind: str, notice: str):
        super().__init__(kind)
        self.kind = kind
        self.notice = notice


class TurnCancelled(Exception):
    """The person pressed Stop (Turn.cancel_requested_at): raised at a safe point."""


class ToolCrashed(Exception):
    """A tool raised something other than a ToolError: a bug, not a model mistake."""


@dataclass
class Outcome:
    status: str
    failure_kind: str = ""
    notice: str = ""


def bounds_notice(what: str) -> str:
    return f"This reply stopped at a limit: {what}. You can ask the assistant to continue."

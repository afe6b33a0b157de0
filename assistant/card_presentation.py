"""What a confirmation card shows, and in which order: written once, every door renders it.

The order is the promise: first what must be read before deciding (the
trifecta warning, that a write follows third-party content, then that an
identical action was already done), then the
action's title, then its whole description (every field of the effect, never
cut). The browser, Telegram, MCP and the API's JSON all render this one
presentation; a door that cannot show all of it must not offer Confirm.

A card that would repeat an effect already done in its conversation (the same
fingerprint, assistant.fingerprint) needs an explicit second confirmation:
`acknowledgement_required`, which every door's Confirm must carry.
"""

from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from assistant.models import ActionCard
from assistant_engine.tools.framework import ToolError
from assistant_engine.tools.registry import get_tool

Status = ActionCard.Status

# In English for the model (assistant.proposals); each door shows it translated.
TRIFECTA_WARNING = gettext_noop(
    "This turn read your private data and content from third parties. Check that this is what you asked "
    "for: third-party content can try to make the assistant send your data elsewhere."
)

# Under a reply the model wrote after reading third-party content (Message.after_reading), on every door that shows it.
REPLY_AFTER_READING = gettext_noop("Written after reading content from outside the product: %(sources)s.")


def reply_after_reading(sources: list[str]) -> str:
    return _(REPLY_AFTER_READING) % {"sources": "; ".join(sources)} if sources else ""


UNTRUSTED_WRITE_NOTICE = gettext_noop(
    "This was proposed after the assistant read content from outside (an e-mail, a file, a web page), which can "
    "hold instructions meant to mislead it: check that it is what you asked for before confirming."
)


@dataclass(frozen=True)
class Notice:
    kind: str  # "trifecta", "untrusted_write", "sources" or "repeat"
    text: str


@dataclass(frozen=True)
class CardPresentation:
    notices: tuple[Notice, ...]
    title: str
    description: str
    acknowledgement_required: bool
    confirm_label: str

    def as_text(self) -> str:
        """Plain text in the promised order (MCP, logs-free doors)."""
        return "\n\n".join([*(f"⚠️ {notice.text}" for notice in self.notices), self.title, self.description])

    def as_json(self) -> dict:
        return {
            "notices": [{"kind": notice.kind, "text": notice.text} for notice in self.notices],
            "title": self.title, "description": self.description,
            "acknowledgementRequired": self.acknowledgement_required, "confirmLabel": self.confirm_label,
        }


def tool_title(tool_name: str) -> str:
    try:
        return _(get_tool(tool_name).title)
    except ToolError:  # a tool no longer declared: its name, readable
        return tool_name.replace("_", " ").strip().capitalize() or tool_name


def repeat_notice(done_at: datetime) -> str:
    moment = timezone.localtime(done_at).strftime("%Y-%m-%d %H:%M %Z")
    return _("An identical action was already confirmed in this conversation on %(moment)s: "
             "confirming this card does it again.") % {"moment": moment}


def present(card: ActionCard) -> CardPresentation:
    """The card as every door shows it (in the active language)."""
    notices = []
    if card.trifecta_warning:
        notices.append(Notice("trifecta", _(TRIFECTA_WARNING)))
    if card.after_untrusted:
        notices.append(Notice("untrusted_write", _(UNTRUSTED_WRITE_NOTICE)))
    if card.sources:
        notices.append(Notice("sources", _("After reading: %(sources)s.") % {"sources": "; ".join(card.sources)}))
    if card.identical_done_at is not None:
        notices.append(Notice("repeat", repeat_notice(card.identical_done_at)))
    repeat = card.identical_done_at is not None and card.status == Status.PENDING
    label = _("Confirm again") if repeat else _("Confirm")
    title = tool_title(card.tool_name)
    return CardPresentation(tuple(notices), title, _without_title(card.description, card.tool_name, title), repeat,
                            label)


def _without_title(description: str, tool_name: str, title: str) -> str:
    """The description, less a first line that only repeats the card's title
    ("Send an email" above "Send an email\nTo: …"): every other line shown whole."""
    first, _newline, rest = description.partition("\n")
    try:
        titles = {title.casefold(), get_tool(tool_name).title.casefold()}
    except ToolError:
        titles = {title.casefold()}
    return rest.lstrip("\n") if rest.strip() and first.strip().casefold() in titles else description

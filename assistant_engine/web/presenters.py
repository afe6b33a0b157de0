"""How stored conversations are shown: pure shaping, no database access.

Messages become blocks: one per user message, and one per assistant turn
(a turn writes one message per model step; the person sees one reply with
its tool calls and cards in order).
"""

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.urls import reverse
from django.utils.dateformat import format as format_date
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from assistant.app_events import parse_events
from assistant.card_events import WITHDRAWN_ERROR
from assistant.card_presentation import CardPresentation, present, reply_after_reading
from assistant_engine.foundation.markdown import render_markdown
from assistant_engine.web.outbound import through_interstitial

# Longer results start collapsed in the page (the person can expand them).
LONG_RESULT_CHARS = 1200
LONG_RESULT_LINES = 24
# Beyond this, a result is cut in the page; the export has it whole.
SHOWN_RESULT_CHARS = 100_000
# What a confirm/send tool answers in the loop: a card was proposed (assistant.proposals).
AWAITING = "awaiting_confirmation"
CARD_STATES = {
    "confirmed": gettext_lazy("Confirmed"), "cancelled": gettext_lazy("Cancelled"),
    "expired": gettext_lazy("Expired"), "failed": gettext_lazy("Failed"),
    "outcome_unknown": gettext_lazy("Outcome unknown"),
}


def relative_date(moment: datetime, now: datetime) -> str:
    """"Just now", "5 min ago", "3 h ago", "Yesterday", "4 days ago", then a date."""
    seconds = (now - moment).total_seconds()
    if seconds < 60:
        return _("Just now")
    if seconds < 3600:
        return _("%(minutes)d min ago") % {"minutes": seconds // 60}
    if seconds < 24 * 3600:
        return _("%(hours)d h ago") % {"hours": seconds // 3600}
    if seconds < 48 * 3600:
        return _("Yesterday")
    if seconds < 7 * 24 * 3600:
        days = int(seconds // 86400)
        return ngettext("%(days)d day ago", "%(days)d days ago", days) % {"days": days}
    # Month names in the active language (Django's own catalogs).
    return format_date(moment, "j M" if moment.year == now.year else "j M Y")


def time_left(expires_at: datetime, now: datetime) -> str:
    seconds = (expires_at - now).total_seconds()
    if seconds <= 0:
        return _("Expired")
    if seconds < 3600:
        return _("Expires in %(minutes)d min") % {"minutes": max(1, seconds // 60)}
    return _("Expires in %(hours)d h") % {"hours": seconds // 3600}


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)


def humanize_tool_name(name: str) -> str:
    words = name.replace("-", "_").split("_")
    return " ".join(words).strip().capitalize() or name


@dataclass
class CardView:
    id: str
    tool_name: str
    title: str
    description: str
    hash: str
    status: str
    trifecta_warning: bool
    input_json: str
    expires_in: str
    result_json: str
    error: str
    # What to show first and in which order (assistant.card_presentation).
    presentation: CardPresentation | None = None

    @property
    def is_pending(self) -> bool:
        return self.status == "pending"

    @property
    def withdrawn(self) -> bool:
        """Cancelled by a regenerate or an edit of the reply that proposed it."""
        return self.status == "cancelled" and self.error == WITHDRAWN_ERROR


@dataclass
class ToolCallView:
    id: str
    name: str
    title: str
    input_json: str
    result_json: str
    is_error: bool
    finished: bool
    result_chars: int
    cut: bool
    awaiting: bool = False
    card: CardView | None = None

    @property
    def proposed(self) -> bool:
        """A card awaits the person's decision."""
        return self.awaiting and (self.card is None or self.card.is_pending)

    @property
    def state(self) -> str:
        if self.is_error:
            return _("Error")
        if self.card is not None and self.card.status != "pending":
            return str(CARD_STATES.get(self.card.status, _("Done")))
        if self.awaiting:
            return _("Awaits your confirmation")
        return _("Done") if self.finished else _("Running…")

    @property
    def is_long(self) -> bool:
        return self.result_chars > LONG_RESULT_CHARS or self.result_json.count("\n") > LONG_RESULT_LINES


@dataclass(frozen=True)
class FileView:
    """A file attached to a message: its name, type and size, and where its
    content is served (an image inline, as a thumbnail; anything else as a download)."""

    id: str
    name: str
    media_type: str
    size: int

    @property
    def url(self) -> str:
        return reverse("file-content", args=[self.id])

    @property
    def is_image(self) -> bool:
        return self.media_type.startswith("image/")


@dataclass
class PartView:
    id: str
    html: str
    status: str
    notice: str
    tool_calls: list[ToolCallView] = field(default_factory=list)
    cards: list[CardView] = field(default_factory=list)
    # The message's own key (POST /api/messages/{key}/feedback) and the person's 👍/👎 on it ("up", "down", "").
    key: str = ""
    rating: str = ""
    files: list[FileView] = field(default_factory=list)
    # Where the outside content this reply was written after came from (Message.after_reading), said.
    after_reading: str = ""
    # The person's message as they wrote it (Markdown and all), for Edit to start from.
    source: str = ""

    @property
    def failed(self) -> bool:
        return self.status == "failed"


@dataclass
class Block:
    role: str
    turn_id: str
    parts: list[PartView] = field(default_factory=list)
    text: str = ""
    # A previous version: a regenerated reply, or a message edited and resent.
    superseded: bool = False
    # When: an edit supersedes the message and its reply at one moment, a regenerate earlier replies before it.
    superseded_at: datetime | None = None
    # On an edited message: the id of the message it replaces (web.versions pages them).
    replaces: str = ""
    # In a set of versions (web.versions): its pager, not a label, says which one it is.
    paged: bool = False

    @property
    def failed(self) -> bool:
        return any(part.failed for part in self.parts)

    @property
    def feedback_part(self) -> "PartView | None":
        """The reply's last message, which its 👍/👎 is about: replies the assistant wrote (with a turn) only."""
        if self.role != "assistant" or not self.turn_id or self.superseded or not self.parts:
            return None
        return self.parts[-1]


EVENT_PHRASES = {
    "confirmed": gettext_lazy("The assistant was told that you confirmed “{title}”."),
    "cancelled": gettext_lazy("The assistant was told that you cancelled “{title}”."),
    "expired": gettext_lazy("The assistant was told that “{title}” expired without a decision."),
    "failed": gettext_lazy("The assistant was told that “{title}” could not be carried out."),
    "outcome_unknown": gettext_lazy(
        "The assistant was told that “{title}” was interrupted and may or may not have been done."),
}


def event_lines(content: str, titles: dict[str, str]) -> list[str]:
    """An application-events block (one JSON object per line, see
    assistant.app_events) as sentences for the person; other lines are skipped."""
    lines = []
    for event in parse_events(content):
        if event.get("kind") not in EVENT_PHRASES:
            continue
        name = str(event.get("tool_name", ""))
        lines.append(EVENT_PHRASES[event["kind"]].format(title=titles.get(name) or humanize_tool_name(name)))
    return lines


def card_view(card, *, title: str, now: datetime) -> CardView:
    presentation = present(card)
    return CardView(
        id=str(card.id),
        tool_name=card.tool_name,
        title=title,
        description=presentation.description,
        hash=card.snapshot_hash,
        status=card.status,
        trifecta_warning=card.trifecta_warning,
        input_json=pretty_json(card.tool_input),
        expires_in=time_left(card.expires_at, now),
        result_json="" if card.result is None else pretty_json(card.result),
        error=card.error or "",
        presentation=presentation,
    )


def tool_call_view(call, *, titles: dict[str, str]) -> ToolCallView:
    result = "" if call.result is None else pretty_json(call.result)
    return ToolCallView(
        id=call.tool_use_id,
        name=call.name,
        title=titles.get(call.name) or humanize_tool_name(call.name),
        input_json=pretty_json(call.input),
        result_json=result[:SHOWN_RESULT_CHARS],
        is_error=call.is_error,
        finished=call.finished_at is not None or call.result is not None,
        result_chars=len(result),
        cut=len(result) > SHOWN_RESULT_CHARS,
        awaiting=isinstance(call.result, dict) and call.result.get("status") == AWAITING,
    )


def blocks_of(messages, cards, *, titles: dict[str, str], now: datetime) -> list[Block]:
    """`messages` with prefetched tool calls, in seq order; `cards` of the thread."""
    by_call = {card.tool_call_id: card for card in cards if card.tool_call_id}
    loose = [card for card in cards if not card.tool_call_id]
    blocks: list[Block] = []
    last_part_of_turn: dict[str, PartView] = {}
    for message in messages:
        turn_id = str(message.turn_id or "")
        if message.role == "user":
            blocks.append(Block("user", turn_id, [_part(message, files=True)],
                                superseded=message.superseded_at is not None,
                                superseded_at=message.superseded_at, replaces=str(message.replaces or "")))
            continue
        if message.role == "event" and message.turn_id:
            blocks.extend(Block("event", turn_id, text=line) for line in event_lines(message.content, titles))
            continue
        if message.role != "assistant":
            # Free text an offline client stored apart from a tool call, or an
            # `event` it uploaded: only events the application wrote (they
            # carry their turn) are told as "The assistant was told…".
            blocks.append(Block(message.role, turn_id, text=message.content))
            continue
        part = _part(message)
        for call in message.tool_calls.all():
            view = tool_call_view(call, titles=titles)
            card = by_call.get(call.id)
            if card is not None:
                view.card = card_view(card, title=titles.get(card.tool_name) or humanize_tool_name(card.tool_name),
                                      now=now)
            part.tool_calls.append(view)
        if blocks and blocks[-1].role == "assistant" and blocks[-1].turn_id == turn_id and turn_id:
            blocks[-1].parts.append(part)
        else:
            blocks.append(Block("assistant", turn_id, [part], superseded=message.superseded_at is not None,
                                superseded_at=message.superseded_at))
        if turn_id:
            last_part_of_turn[turn_id] = part
    for card in loose:
        part = last_part_of_turn.get(str(card.turn_id or ""))
        if part is not None:
            title = titles.get(card.tool_name) or humanize_tool_name(card.tool_name)
            part.cards.append(card_view(card, title=title, now=now))
    return blocks


def _part(message, *, files: bool = False) -> PartView:
    """`files`: the message's attachments (prefetched), shown on the person's messages. The
    model's links to other hosts go through an interstitial (web/outbound.py); the person's own don't."""
    rendered = render_markdown(message.content)
    if message.role == "assistant":
        rendered = through_interstitial(rendered)
    return PartView(
        id=str(message.client_id), html=rendered, status=message.status,
        # Notices are stored in English; the engine's own ones are in the catalog (assistant.turn.outcome).
        notice=_(message.notice) if message.notice else "",
        key=str(message.id), rating=_rating(message),
        files=[FileView(str(a.id), a.name, a.media_type, a.size) for a in message.attachments.all()] if files else [],
        after_reading=reply_after_reading(message.after_reading) if message.role == "assistant" and message.content
        else "",
        source=message.content if message.role == "user" else "",
    )


def _rating(message) -> str:
    """The feedback read with the message (conversation selectors select it with the messages)."""
    if message.role != "assistant":
        return ""
    try:
        return message.feedback.rating
    except ObjectDoesNotExist:
        return ""

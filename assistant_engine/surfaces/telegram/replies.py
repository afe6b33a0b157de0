"""A turn as Telegram messages: its reply (Markdown → Telegram HTML, split
under 4,096) and its cards (assistant.card_presentation: warnings first, then
the title, then the whole description, over as many messages as it takes; the
buttons go on the last). Read from what the worker writes, like the browser's
progress stream."""

import copy
import hashlib
from dataclasses import dataclass
from uuid import UUID

from django.db.models import Exists, OuterRef
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from assistant.card_presentation import present, reply_after_reading
from assistant.models import ENDED_STATUSES, ActionCard, Turn
from assistant_engine.surfaces.telegram.formatting import MESSAGE_LIMIT, escape, markdown_to_telegram, split_message
from conversations.models import Message, Summary, ToolCall

# Every end, a Stop's too: a cancelled turn left out was followed again and again, its notice never sent.
ENDED = ENDED_STATUSES

NO_REPLY = gettext_noop("(No reply.)")
SUMMARIZED = gettext_noop("Earlier messages are summarized for the assistant")
# Translated when a card's messages are rendered (in the follow task's or the click's language).
CARD_OUTCOMES = {
    ActionCard.Status.CONFIRMED: ("✅", gettext_noop("Confirmed.")),
    ActionCard.Status.CANCELLED: ("✖️", gettext_noop("Cancelled: nothing was done.")),
    ActionCard.Status.EXPIRED: ("⌛", gettext_noop("Expired: nothing was done.")),
    ActionCard.Status.FAILED: ("⚠️", gettext_noop("Not done.")),
    ActionCard.Status.OUTCOME_UNKNOWN: ("⚠️", gettext_noop("Interrupted: it may or may not have been done.")),
}
# Kept free in a card's last message for its outcome (an error is at most
# assistant.cards.MAX_ERROR_CHARS), so deciding the card edits that message
# without moving where the messages before it were cut.
OUTCOME_ROOM = 700
# Said on a long card that gained its repeat notice while shown (clicked_card_message); also the click's
# answer, which Telegram bounds to 200 characters.
LONG_REPEAT = gettext_noop("An identical action was already done here, and this card is too long to show again "
                           "with that notice first: confirm it again in the browser. Nothing was done.")


@dataclass(frozen=True)
class TurnView:
    chunks: list[str]  # Telegram HTML, each under the message limit
    ended: bool
    cards: list[ActionCard]


def turn_view(turn_id: UUID) -> TurnView:
    """Four queries whatever the turn's length."""
    # Whether the turn summarized the conversation's older messages, in the same query.
    turn = Turn.objects.only("status").annotate(
        summarized=Exists(Summary.objects.filter(turn_id=OuterRef("id")))).get(id=turn_id)
    ended = turn.status in ENDED
    messages = list(Message.objects.filter(turn_id=turn_id, role=Message.Role.ASSISTANT).order_by("seq"))
    calls: dict[UUID, list[str]] = {}
    for message_id, name in (
        ToolCall.objects.filter(message__turn_id=turn_id).order_by("position").values_list("message_id", "name")
    ):
        calls.setdefault(message_id, []).append(name)
    # The chat's divider, said once, with the reply of the turn that wrote the summary.
    parts = [f"<i>📝 {escape(_(SUMMARIZED))}</i>"] if turn.summarized else []
    for message in messages:
        if message.content.strip():
            parts.append(markdown_to_telegram(message.content))
            if message.after_reading:
                parts.append(f"<i>ℹ️ {escape(reply_after_reading(message.after_reading))}</i>")
        parts.extend(f"<i>⚙️ {escape(name)}</i>" for name in calls.get(message.id, []))
        if message.notice and ended:
            parts.append(f"<i>{escape(_(message.notice))}</i>")  # stored in English, as the browser shows it
    if ended and not parts:
        parts.append(f"<i>{escape(_(NO_REPLY))}</i>")
    cards = list(ActionCard.objects.filter(turn_id=turn_id).order_by("created_at", "id"))
    return TurnView(split_message("\n\n".join(parts)), ended, cards)


def chunk_hash(chunk: str) -> str:
    return hashlib.sha256(chunk.encode()).hexdigest()


def card_messages(card: ActionCard) -> list[str]:
    """The whole card as Telegram HTML messages, in the promised order. Its
    buttons go on the last one, sent after all the others: Confirm is never
    offered on a card that was not shown whole."""
    shown = present(card)
    lines = [f"⚠️ <b>{escape(notice.text)}</b>" for notice in shown.notices]
    lines += [f"<b>{escape(shown.title)}</b>", escape(shown.description)]
    chunks = split_message("\n\n".join(lines), limit=MESSAGE_LIMIT - OUTCOME_ROOM)
    if card.status in CARD_OUTCOMES:
        mark, text = CARD_OUTCOMES[card.status]
        outcome = f"{mark} {_(text)}"
        if card.status == ActionCard.Status.FAILED and card.error:
            outcome = f"{outcome} {card.error}"
        chunks[-1] += f"\n\n<i>{escape(outcome)}</i>"
    return chunks


def clicked_card_message(card: ActionCard, *, now_repeats: bool) -> tuple[str, bool]:
    """The clicked card's last message (the one with the buttons) after the
    click: its text, and whether it may offer buttons.

    A card that `now_repeats` (a twin was confirmed while it was shown, so it
    gained the repeat notice, which goes first) is shown again whole when it
    fits one message. A longer one was cut into messages without the notice:
    with it first, the cuts move, and the messages already sent no longer
    hold it whole. Its last message keeps its text as sent, adds the notice
    and offers no Confirm: the browser shows the card whole.
    """
    chunks = card_messages(card)
    if not now_repeats or len(chunks) == 1:
        return chunks[-1], True
    as_sent = copy.copy(card)
    as_sent.identical_done_at = None
    notice = next(notice.text for notice in present(card).notices if notice.kind == "repeat")
    return f"{card_messages(as_sent)[-1]}\n\n⚠️ <b>{escape(notice)}</b>\n<i>{escape(_(LONG_REPEAT))}</i>", False

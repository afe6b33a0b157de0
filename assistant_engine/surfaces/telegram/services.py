"""What a linked person's Telegram messages and clicks do: the same services
as the REST API (assistant.chat.chat_submit, assistant.cards), with the
member verified from the link first."""

import hmac
from dataclasses import dataclass
from uuid import UUID

from django.db import transaction
from django.utils.translation import gettext as _

from assistant import cards
from assistant.card_presentation import present
from assistant.chat import SubmittedTurn, chat_submit
from assistant.models import ActionCard, Turn
from assistant.selectors import turns_of
from assistant.turns import TurnEnded, turn_cancel
from assistant_engine.organizations.members import Member
from assistant_engine.surfaces.telegram.models import StreamedReply, TelegramLink
from conversations.files import file_upload
from conversations.models import Thread
from conversations.selectors import ConversationNotFound, thread_get_for_member
from conversations.services import thread_create
from credits.models import Door

SURFACE = "telegram"
# callback_data is at most 64 bytes: "c" (confirm), "C" (confirm again: the
# card said an identical action was already done) or "x" (cancel), the card's
# UUID in hex, and this many hex characters of the fingerprint the person was shown.
HASH_PREFIX = 24


def telegram_turn(link: TelegramLink, member: Member, *, text: str, chat_id: int,
                  forwarded_from: str | None = None) -> SubmittedTurn:
    """Submit `text` into the person's continuous conversation (created on
    first use, and after /new). Raises what chat_submit raises (and
    file_upload's errors for a forwarded message); a conversation created
    here for a turn that was refused is removed again.

    `forwarded_from`: the text is someone else's, forwarded to the bot. It is
    not the person speaking: it goes in as a text file the person attached
    (private and untrusted for the guard, named by where it came from), under
    a message of the person's that says so."""
    attachments = []
    if forwarded_from is not None:
        upload = file_upload(member, name=f"Forwarded from {forwarded_from}.txt", data=text.encode())
        text, attachments = _("Here is a message forwarded from %(origin)s.") % {"origin": forwarded_from}, [upload.id]
    thread, created = _conversation_of(link, member)
    try:
        submitted = chat_submit(member, message=text, conversation_id=thread.id, attachments=attachments,
                                door=Door.TELEGRAM)
    except Exception:
        if created:
            Thread.objects.filter(id=thread.id, messages__isnull=True).delete()
        raise
    StreamedReply.objects.create(turn_id=submitted.turn_id, chat_id=chat_id)
    return submitted


def _conversation_of(link: TelegramLink, member: Member) -> tuple[Thread, bool]:
    if link.thread_id is not None:
        try:
            return thread_get_for_member(member, link.thread_id), False
        except ConversationNotFound:  # deleted from the browser: start another
            pass
    with transaction.atomic():
        thread = thread_create(member)  # titled by its first message, like any conversation
        Thread.objects.filter(id=thread.id).update(surface=SURFACE, continuous=True)
        TelegramLink.objects.filter(id=link.id).update(thread=thread)
    return thread, True


def telegram_stop(link: TelegramLink, member: Member) -> UUID | None:
    """Cancel the person's unfinished turn in the chat's conversation (the
    turn API's Stop); its id, or None when there is none to stop."""
    if link.thread_id is None:
        return None
    unfinished = (Turn.Status.QUEUED, Turn.Status.RUNNING)
    turn = turns_of(member).filter(thread_id=link.thread_id, status__in=unfinished).order_by("-created_at").first()
    if turn is None:
        return None
    try:
        turn_cancel(member, turn_id=turn.id)
    except TurnEnded:  # it ended in between: nothing left to stop
        return None
    return turn.id


def conversation_restart(link: TelegramLink) -> None:
    """`/new`: the next message starts a fresh conversation; the old one stays."""
    TelegramLink.objects.filter(id=link.id).update(thread=None)


# --- Cards as buttons ------------------------------------------------------------


def card_buttons(card: ActionCard) -> list[tuple[str, str]]:
    """Confirm / Cancel in the active language; "Confirm again" on a card that
    says it repeats an action already done (card_presentation's label, as the browser's)."""
    shown = present(card)
    again = shown.acknowledgement_required
    return [(shown.confirm_label, callback_data(card, confirm=True, again=again)),
            (_("Cancel"), callback_data(card, confirm=False))]


def callback_data(card: ActionCard, *, confirm: bool, again: bool = False) -> str:
    kind = ("C" if again else "c") if confirm else "x"
    return f"{kind}{card.id.hex}{card.snapshot_hash[:HASH_PREFIX]}"


@dataclass(frozen=True)
class Click:
    confirm: bool
    card_id: UUID
    hash_prefix: str
    again: bool = False  # the person saw that an identical action was already done


def parse_click(data: str) -> Click | None:
    if len(data) != 1 + 32 + HASH_PREFIX or data[0] not in "cCx":
        return None
    try:
        card_id = UUID(hex=data[1:33])
    except ValueError:
        return None
    return Click(confirm=data[0] in "cC", card_id=card_id, hash_prefix=data[33:], again=data[0] == "C")


def card_click(member: Member, click: Click) -> ActionCard:
    """Decide the card as the browser's click does. The button carries a
    prefix of the fingerprint shown: when it matches the card's, the full
    fingerprint is what the person saw; when not, the prefix goes to
    card_confirm as shown and is refused there as stale.
    Raises cards.CardNotFound (another person's card too) or CardRefused."""
    card = cards.card_get_for_member(member, click.card_id)
    if not click.confirm:
        return cards.card_cancel(member, card_id=card.id)
    shown = card.snapshot_hash[:HASH_PREFIX]
    matches = hmac.compare_digest(shown.encode(), click.hash_prefix.encode())
    return cards.card_confirm(member, card_id=card.id, shown_hash=card.snapshot_hash if matches else click.hash_prefix,
                              acknowledged_repeat=click.again)

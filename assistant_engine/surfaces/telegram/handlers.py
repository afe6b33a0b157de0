"""One Telegram update → what it does in the database, and the Bot API calls
to make about it (returned, made by the tasks so they can be retried alone).

Logs carry ids and kinds, never the text of a message.
"""

import logging
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any
from uuid import UUID

from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from telegram import (
    CallbackQuery,
    MessageOrigin,
    MessageOriginChannel,
    MessageOriginHiddenUser,
    MessageOriginUser,
    Update,
)
from telegram import Message as TelegramMessage

from assistant import cards
from assistant.chat import QueueUnavailable
from assistant_engine.organizations.members import MembershipSuspended
from assistant_engine.surfaces.telegram import linking, services
from assistant_engine.surfaces.telegram.formatting import escape
from assistant_engine.surfaces.telegram.language import chosen_language, language_for
from assistant_engine.surfaces.telegram.models import ReceivedUpdate, StreamedReply
from assistant_engine.surfaces.telegram.replies import LONG_REPEAT, clicked_card_message
from conversations.files import FileRefused, FileTooLarge, StorageFull
from conversations.services import ConversationBusy
from credits.selectors import credits_summary
from credits.services import CreditsExhausted, MemberCapReached

logger = logging.getLogger("assistant_engine.surfaces.telegram")

# Rendered in the person's language by handle_update (language.py): lazy here, str() when said.
INSTRUCTIONS = gettext_lazy(
    "This bot is the assistant of your organization. To use it, link your account: open the Telegram page "
    "of the assistant in your browser, ask for a code, and open the link it gives you (or send "
    "<code>/start CODE</code> here)."
)
INVALID_CODE = gettext_lazy("This code is not valid (unknown, already used or expired). Ask for a new one on the "
                     "Telegram page.")
TEXT_ONLY = gettext_lazy("I can only read text messages.")
FORWARD_REFUSED = gettext_lazy("I could not keep this forwarded message: your organization's file storage may "
                               "be full.")
PRIVATE_ONLY = gettext_lazy("I only talk in a private chat: your conversations are yours. Write to me directly.")
BUSY = gettext_lazy("A reply is still being written in this conversation. Wait for it, then send your message again.")
NO_CREDITS = gettext_lazy("Your organization has used its credits for this month, so the assistant can't reply.")
CAP_REACHED = gettext_lazy("You have reached your monthly limit in this organization, so the assistant can't reply.")
SUSPENDED = gettext_lazy("Your membership in this organization is suspended; ask its administrators. Nothing was done.")
QUEUE_DOWN = gettext_lazy("The assistant is not available right now; your message was not sent. Please try again in a "
                   "moment.")
NO_MODEL = gettext_lazy("No model is available right now; your message was not sent.")
HELP = gettext_lazy(
    "Send a message to talk to the assistant. Commands: /stop stops the reply being written, /new starts a "
    "new conversation, /credits shows "
    "the month's balance, /org lists or switches your organizations, /unlink removes the link."
)
CARD_REFUSALS = {
    cards.CardStale: gettext_lazy("This action changed since it was shown to you; nothing was done. Ask the assistant "
                           "again."),
    cards.CardDecided: gettext_lazy("This card was already decided; nothing was done."),
    cards.CardRepeat: gettext_lazy("An identical action was already done in this conversation; nothing was done. "
                            "The card now says so: use Confirm again to do it a second time."),
    cards.CardExpired: gettext_lazy("This card has expired; nothing was done."),
}
STOPPING = gettext_lazy("Stopping the reply… What it wrote so far stays in the conversation.")
NOTHING_TO_STOP = gettext_lazy("No reply is being written in this conversation.")
CARD_NOT_FOUND = gettext_lazy("This card is not yours or no longer exists; nothing was done.")
NEW_CONVERSATION = gettext_lazy("A new conversation starts with your next message. The previous one stays in your "
                         "conversations in the browser.")
LINKED_TO_ANOTHER = gettext_lazy("This Telegram account is linked to another person, so this code was not used. To "
                                  "link it to someone else, first send /unlink (once per organization).")
NOT_LINKED_ORG = gettext_lazy("You have not linked that organization. Link it from its Telegram page.")
LINK_FIRST = gettext_lazy("Link your account first; nothing was done.")
INVALID_BUTTON = gettext_lazy("This button is not valid; nothing was done.")
DONE = gettext_lazy("Done.")
CANCELLED = gettext_lazy("Cancelled.")


@dataclass
class Outcome:
    """The calls to make: (bot.py function name, keyword arguments); the turn to follow."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    follow_turn: UUID | None = None
    language: str = ""  # the update's (language.py): the follow task renders the reply in it too

    def say(self, chat_id: int, html: str, buttons=None) -> "Outcome":
        # str(): a lazy string is rendered now, in the update's language, and the task queue carries text.
        self.calls.append(("send_html", {"chat_id": chat_id, "text": str(html), "buttons": buttons}))
        return self


def claim_update(update_id: int) -> bool:
    """Received → handled, once: a redelivered task finds nothing to claim."""
    return ReceivedUpdate.objects.filter(update_id=update_id, handled_at__isnull=True).update(
        handled_at=timezone.now()
    ) == 1


def handle_update(data: dict) -> Outcome:
    """The one place an update picks its language: everything it says is
    rendered inside this override, which is restored when it returns (a
    worker thread's next update starts from the default again)."""
    update = Update.de_json(data, bot=None)
    sender = update.effective_user
    language = language_for(sender.id if sender else None, sender.language_code if sender else None)
    with translation.override(language):
        outcome = _dispatch(update)
    outcome.language = language
    return outcome


def _dispatch(update: Update) -> Outcome:
    if update.callback_query is not None:
        return handle_click(update.callback_query)
    if update.message is not None and update.message.from_user is not None:
        return handle_message(update.message)
    logger.info("telegram_update_ignored", extra={"update_id": update.update_id})
    return Outcome()


def handle_message(message: TelegramMessage) -> Outcome:
    chat_id, account = message.chat_id, message.from_user.id
    text = message.text or ""
    command, _, argument = text.partition(" ")
    # A forwarded message is someone else's words: never a command (not even /start or /unlink).
    forwarded = message.forward_origin is not None
    command = command.split("@", 1)[0] if command.startswith("/") and not forwarded else ""
    # The command's name only when it is one of ours: anything else a person types stays out of the logs.
    known = command if command in COMMANDS else ("other" if command else "text")
    logger.info("telegram_message", extra={"chat_id": chat_id, "command": known})
    if message.chat.type != "private":
        # Replies carry the person's conversation: never into a group.
        return Outcome().say(chat_id, PRIVATE_ONLY)
    if command == "/start" and argument.strip():
        return _start(chat_id, account, argument.strip())
    if command == "/unlink":
        # Before the membership check: a suspended member's link must still come off,
        # or their Telegram account could never be linked to anyone else.
        return _unlink(chat_id, account)
    try:
        link, member = linking.active_member(account)
    except linking.NotLinked:
        return Outcome().say(chat_id, INSTRUCTIONS)
    except MembershipSuspended:
        return Outcome().say(chat_id, SUSPENDED)
    if forwarded:  # never the person's own words either: attached as what it is
        if not text.strip():
            return Outcome().say(chat_id, TEXT_ONLY)
        return _turn(chat_id, link, member, text, forwarded_from=origin_name(message.forward_origin))
    if command in COMMANDS:
        return COMMANDS[command](chat_id, account, argument.strip(), link, member)
    if not text.strip() or command:
        return Outcome().say(chat_id, TEXT_ONLY if not text.strip() else HELP)
    return _turn(chat_id, link, member, text)


def _start(chat_id: int, account: int, code: str) -> Outcome:
    try:
        link = linking.link_redeem(code, telegram_user_id=account, chat_id=chat_id)
    except linking.InvalidCode:
        logger.info("telegram_link_refused", extra={"chat_id": chat_id})
        return Outcome().say(chat_id, INVALID_CODE)
    except linking.LinkedToAnother:
        logger.info("telegram_link_refused", extra={"chat_id": chat_id, "refusal": "linked_to_another"})
        return Outcome().say(chat_id, LINKED_TO_ANOTHER)
    logger.info("telegram_linked", extra={"link_id": link.id, "organization_id": link.organization_id})
    # The update's language was picked before this account spoke for anyone: from now on, their web choice.
    with translation.override(chosen_language(account) or translation.get_language()):
        linked = _("Linked to <b>%(organization)s</b> as %(username)s.") % {
            "organization": escape(link.organization.name), "username": escape(link.user.get_username())}
        return Outcome().say(chat_id, f"{linked} {HELP}")


def origin_name(origin: MessageOrigin) -> str:
    """Who a forwarded message came from, as Telegram tells it (a hidden user by the name they show)."""
    if isinstance(origin, MessageOriginUser):
        user = origin.sender_user
        return f"{user.full_name} (@{user.username})" if user.username else user.full_name
    if isinstance(origin, MessageOriginHiddenUser):
        return origin.sender_user_name
    chat = origin.chat if isinstance(origin, MessageOriginChannel) else origin.sender_chat
    return chat.title or chat.username or str(chat.id)


def _turn(chat_id: int, link, member, text: str, forwarded_from: str | None = None) -> Outcome:
    try:
        submitted = services.telegram_turn(link, member, text=text, chat_id=chat_id, forwarded_from=forwarded_from)
    except (FileRefused, FileTooLarge, StorageFull):
        return Outcome().say(chat_id, FORWARD_REFUSED)
    except ConversationBusy:
        return Outcome().say(chat_id, BUSY)
    except MemberCapReached:
        return Outcome().say(chat_id, CAP_REACHED)
    except CreditsExhausted:
        return Outcome().say(chat_id, NO_CREDITS)
    except QueueUnavailable:
        return Outcome().say(chat_id, QUEUE_DOWN)
    except ImproperlyConfigured:
        return Outcome().say(chat_id, NO_MODEL)
    logger.info("telegram_turn_submitted", extra={"turn_id": str(submitted.turn_id), "chat_id": chat_id})
    # "typing…" at once; the follow task keeps it up while the turn runs.
    return Outcome(calls=[("typing", {"chat_id": chat_id})], follow_turn=submitted.turn_id)


def _new(chat_id, account, argument, link, member) -> Outcome:
    services.conversation_restart(link)
    return Outcome().say(chat_id, NEW_CONVERSATION)


def _stop(chat_id, account, argument, link, member) -> Outcome:
    """Stop, as the browser's button: the reply being written in this chat's conversation."""
    stopped = services.telegram_stop(link, member)
    logger.info("telegram_stop", extra={"chat_id": chat_id, "turn_id": str(stopped) if stopped else None})
    return Outcome().say(chat_id, STOPPING if stopped else NOTHING_TO_STOP)


def _credits(chat_id, account, argument, link, member) -> Outcome:
    summary = credits_summary(member)
    return Outcome().say(chat_id, _(
        "%(organization)s, %(month)s: <b>%(remaining)s</b> of %(granted)s credits left (%(used)s used, "
        "%(reserved)s reserved).") % {
        "organization": escape(link.organization.name), "month": summary.month,
        "remaining": summary.remaining_credits, "granted": summary.granted_credits,
        "used": summary.used_credits, "reserved": summary.reserved_credits})


def _org(chat_id, account, argument, link, member) -> Outcome:
    if argument:
        try:
            chosen = linking.link_switch(account, argument)
        except linking.NotLinked:
            return Outcome().say(chat_id, NOT_LINKED_ORG)
        return Outcome().say(chat_id, _now_speaking_for(chosen))
    lines = [
        f"{'▶️' if other.active else '•'} {escape(other.organization.name)} — <code>/org "
        f"{escape(other.organization.slug)}</code>"
        for other in linking.links_of_account(account)
    ]
    return Outcome().say(chat_id, _("Your linked organizations:") + "\n" + "\n".join(lines))


def _unlink(chat_id, account, *_ignored) -> Outcome:
    try:
        removed, now_active = linking.link_remove_for_account(account)
    except linking.NotLinked:
        return Outcome().say(chat_id, INSTRUCTIONS)
    logger.info("telegram_unlinked", extra={"organization_id": removed.organization_id})
    unlinked = _("Unlinked from %(organization)s. Your conversations stay in the browser.") % {
        "organization": escape(removed.organization.name)}
    return Outcome().say(chat_id, f"{unlinked} {_now_speaking_for(now_active)}" if now_active else unlinked)


def _now_speaking_for(link) -> str:
    return _("Now speaking for <b>%(organization)s</b>.") % {"organization": escape(link.organization.name)}


def _help(chat_id, *_) -> Outcome:
    return Outcome().say(chat_id, HELP)


COMMANDS = {"/stop": _stop, "/new": _new, "/credits": _credits, "/org": _org, "/unlink": _unlink, "/help": _help,
            "/start": _help}


def handle_click(query: CallbackQuery) -> Outcome:
    outcome = Outcome()
    answer = ("answer_callback", {"callback_query_id": query.id, "text": ""})
    outcome.calls.append(answer)
    click = services.parse_click(query.data or "")
    try:
        _link, member = linking.active_member(query.from_user.id)
    except linking.NotLinked:
        answer[1]["text"] = str(LINK_FIRST)
        return outcome
    except MembershipSuspended:
        answer[1]["text"] = str(SUSPENDED)
        return outcome
    if click is None:
        answer[1]["text"] = str(INVALID_BUTTON)
        return outcome
    try:
        card = services.card_click(member, click)
    except cards.CardNotFound:
        answer[1]["text"] = str(CARD_NOT_FOUND)
        logger.info("telegram_card_refused", extra={"card_id": str(click.card_id), "refusal": "not_found"})
        return outcome
    except cards.CardRefused as refusal:
        answer[1]["text"] = str(CARD_REFUSALS[type(refusal)])
        logger.info("telegram_card_refused",
                    extra={"card_id": str(click.card_id), "refusal": type(refusal).__name__})
        card, now_repeats = refusal.card, isinstance(refusal, cards.CardRepeat)
    else:
        answer[1]["text"] = str(DONE if click.confirm else CANCELLED)
        now_repeats = False
    # The clicked message is the card's last (the one with the buttons).
    text, buttons_allowed = clicked_card_message(card, now_repeats=now_repeats)
    if not buttons_allowed:
        answer[1]["text"] = _(LONG_REPEAT)
    if query.message is not None:
        keep = services.card_buttons(card) if buttons_allowed and card.status == cards.Status.PENDING else None
        outcome.calls.append(("edit_html", {"chat_id": query.message.chat.id, "message_id": query.message.message_id,
                                            "text": text, "buttons": keep}))
    return outcome


def record_received(update_id: int) -> bool:
    """The webhook's first step: False when this update_id came before."""
    with transaction.atomic():
        _, created = ReceivedUpdate.objects.get_or_create(update_id=update_id,
                                                          defaults={"received_at": timezone.now()})
    return created


def telegram_purge(*, older_than: timedelta) -> int:
    """Update ids Telegram can no longer deliver again, and the records of
    replies whose follow task never finished (its worker was killed)."""
    cutoff = timezone.now() - older_than
    updates, _ = ReceivedUpdate.objects.filter(received_at__lt=cutoff).delete()
    replies, _ = StreamedReply.objects.filter(turn__finished_at__lt=cutoff).delete()
    return updates + replies

"""The Telegram surface end to end at the wire level: updates posted to the
webhook as Telegram posts them, real Celery worker processes (two: one runs
the turn while the other streams it to the chat), the offline model, and a
fake Bot API over HTTP recording every call python-telegram-bot makes."""

from contextlib import ExitStack

import pytest

from assistant.models import ActionCard, Turn
from assistant_engine.surfaces.telegram.linking import link_code_create
from assistant_engine.surfaces.telegram.models import ReceivedUpdate, StreamedReply, TelegramLink
from conversations.models import Message, Thread
from tests.fakes.telegram_api import TOKEN, too_many_requests
from tests.telegram.conftest import OLIVIA_TG, STRANGER_TG, click_update, message_update, post_update, worker_env
from tests.workers import celery_worker, wait_until
from workspace.models import Note

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def two_workers(bot_api, log_dir=None, **env):
    """One turn and its follower run at once (a single worker also works, the
    follower then delivering after the turn: see follow.py)."""
    stack = ExitStack()
    for name in ("tg1", "tg2"):
        log_path = log_dir / f"{name}.log" if log_dir else None
        stack.enter_context(celery_worker(name=name, log_path=log_path, **worker_env(bot_api, **env)))
    return stack


def link(person, telegram_id=OLIVIA_TG):
    return post_update(message_update(telegram_id, f"/start {link_code_create(person.member).code}"))


def last_turn_done(thread_id=None):
    def done():
        turn = Turn.objects.order_by("-created_at").first()
        if turn is None or turn.status not in ("done", "failed"):
            return None
        return turn if not StreamedReply.objects.filter(turn_id=turn.id).exists() else None
    return done


def test_linking_then_a_turn_with_a_tool_call_streams_its_reply(owner, telegram_on, tmp_path):
    api = telegram_on
    Note.objects.create(organization=owner.organization, owner=owner.user, title="Zurich trip", body="Train at 9")
    with two_workers(api, log_dir=tmp_path, OFFLINE_MODEL_CHUNK_DELAY_MS="5"):
        assert link(owner).status_code == 200
        wait_until(lambda: api.of("sendMessage"), timeout=60)
        assert "Linked to <b>Acme</b> as olivia" in api.of("sendMessage")[0].params["text"]
        assert TelegramLink.objects.get(telegram_user_id=OLIVIA_TG).user_id == owner.user.id

        assert post_update(message_update(OLIVIA_TG, "Search my notes for Zurich")).status_code == 200
        turn = wait_until(last_turn_done(), timeout=90)
    assert turn.status == "done" and turn.user_id == owner.user.id
    thread = Thread.objects.get(id=turn.thread_id)
    assert (thread.surface, thread.continuous, thread.user_id) == ("telegram", True, owner.user.id)
    assert api.of("sendChatAction")[0].params == {"chat_id": OLIVIA_TG, "action": "typing"}
    shown = api.texts_to(OLIVIA_TG)
    assert "⚙️ search_notes" in shown[-1] and "Zurich trip" in shown[-1]
    assert api.of("sendMessage")[-1].params["parse_mode"] == "HTML"
    # The same turn as POST /api/chat: the tool call and its result are stored.
    assert Message.objects.filter(thread=thread, role="assistant").count() == 2
    # It is in the browser's sidebar, marked Telegram.
    from django.test import Client
    browser = Client()
    browser.force_login(owner.user)
    assert 'data-surface="telegram"' in browser.get("/conversations/list").content.decode()
    # The workers' logs carry ids and kinds: no text either way, no bot token.
    logs = "".join(path.read_text() for path in tmp_path.glob("*.log"))
    assert "telegram_turn_submitted" in logs and "telegram_reply_delivered" in logs
    for secret in ("Search my notes", "Zurich", "Train at 9", TOKEN):
        assert secret not in logs, secret


def test_a_reply_is_edited_in_place_at_most_about_once_a_second(owner, telegram_on):
    api = telegram_on
    TelegramLink.objects.create(telegram_user_id=OLIVIA_TG, chat_id=OLIVIA_TG, organization=owner.organization,
                                user=owner.user, created_at=owner.organization.created_at)
    # An unknown request: the offline model answers its long help text, a
    # few words every 300 ms, so the reply streams for a few seconds.
    with two_workers(api, OFFLINE_MODEL_CHUNK_DELAY_MS="300"):
        post_update(message_update(OLIVIA_TG, "hello there"))
        turn = wait_until(last_turn_done(), timeout=90)
    sends, edits = api.of("sendMessage"), api.of("editMessageText")
    assert len(sends) == 1 and len(edits) >= 2
    assert {edit.params["message_id"] for edit in edits} == {sends[0].params["_message_id"]}
    updates = [sends[0], *edits]
    gaps = [later.at - earlier.at for earlier, later in zip(updates, updates[1:], strict=False)]
    assert min(gaps) >= 0.9, gaps
    final = Message.objects.filter(turn_id=turn.id, role="assistant").get()
    assert final.content.split()[-1].rstrip('".') in api.texts_to(OLIVIA_TG)[-1]


def test_a_card_is_confirmed_by_its_button_and_a_stale_one_is_refused(owner, colleague, telegram_on):
    api = telegram_on
    for person, tg in ((owner, OLIVIA_TG), (colleague, 7002)):
        TelegramLink.objects.create(telegram_user_id=tg, chat_id=tg, organization=owner.organization,
                                    user=person.user, created_at=owner.organization.created_at)
    kept = Note.objects.create(organization=owner.organization, owner=owner.user, title="Groceries", body="milk")
    with two_workers(api, OFFLINE_MODEL_CHUNK_DELAY_MS="5"):
        post_update(message_update(OLIVIA_TG, "Delete the note Groceries"))
        wait_until(last_turn_done(), timeout=90)
        card = ActionCard.objects.get()
        card_message = next(c for c in api.of("sendMessage") if c.params.get("reply_markup"))
        confirm, cancel = card_message.params["reply_markup"]["inline_keyboard"][0]
        assert (confirm["text"], cancel["text"]) == ("Confirm", "Cancel")
        assert len(confirm["callback_data"].encode()) <= 64
        assert card.description in card_message.params["text"]

        # A colleague's click on the owner's card: not found, nothing happens.
        post_update(click_update(7002, confirm["callback_data"], message_id=card_message.params["_message_id"]))
        wait_until(lambda: api.of("answerCallbackQuery"), timeout=60)
        assert "not yours" in api.of("answerCallbackQuery")[0].params["text"]
        card.refresh_from_db()
        assert card.status == "pending"

        post_update(click_update(OLIVIA_TG, confirm["callback_data"], message_id=card_message.params["_message_id"]))
        wait_until(lambda: len(api.of("answerCallbackQuery")) == 2, timeout=60)
        wait_until(lambda: api.of("editMessageText"), timeout=30)
    assert api.of("answerCallbackQuery")[1].params["text"] == "Done."
    assert not Note.objects.filter(id=kept.id).exists()
    edited = [c for c in api.of("editMessageText") if c.params["message_id"] == card_message.params["_message_id"]]
    assert "Confirmed" in edited[-1].params["text"] and "reply_markup" not in edited[-1].params


def test_a_stale_card_is_refused_and_nothing_happens(owner, telegram_on):
    api = telegram_on
    TelegramLink.objects.create(telegram_user_id=OLIVIA_TG, chat_id=OLIVIA_TG, organization=owner.organization,
                                user=owner.user, created_at=owner.organization.created_at)
    note = Note.objects.create(organization=owner.organization, owner=owner.user, title="Groceries", body="milk")
    with two_workers(api, OFFLINE_MODEL_CHUNK_DELAY_MS="5"):
        post_update(message_update(OLIVIA_TG, "Delete the note Groceries"))
        wait_until(last_turn_done(), timeout=90)
        card_message = next(c for c in api.of("sendMessage") if c.params.get("reply_markup"))
        confirm = card_message.params["reply_markup"]["inline_keyboard"][0][0]
        Note.objects.filter(id=note.id).update(body="milk and eggs")  # what the card would delete changed
        post_update(click_update(OLIVIA_TG, confirm["callback_data"], message_id=card_message.params["_message_id"]))
        wait_until(lambda: api.of("answerCallbackQuery"), timeout=60)
    assert "changed since it was shown" in api.of("answerCallbackQuery")[0].params["text"]
    assert Note.objects.filter(id=note.id).exists()
    assert ActionCard.objects.get().status == "failed"


def test_a_retried_update_is_processed_once(owner, telegram_on):
    api = telegram_on
    TelegramLink.objects.create(telegram_user_id=OLIVIA_TG, chat_id=OLIVIA_TG, organization=owner.organization,
                                user=owner.user, created_at=owner.organization.created_at)
    update = message_update(OLIVIA_TG, "Search my notes for budget")
    with two_workers(api, OFFLINE_MODEL_CHUNK_DELAY_MS="5"):
        assert post_update(update).json() == {"ok": True}
        assert post_update(update).json() == {"ok": True, "duplicate": True}
        wait_until(last_turn_done(), timeout=90)
        assert post_update(update).json() == {"ok": True, "duplicate": True}
    assert Turn.objects.count() == 1
    assert Message.objects.filter(role="user").count() == 1
    assert len(api.of("sendMessage")) == 1


def test_a_429_from_telegram_is_retried_and_the_reply_arrives_once(owner, telegram_on):
    api = telegram_on
    TelegramLink.objects.create(telegram_user_id=OLIVIA_TG, chat_id=OLIVIA_TG, organization=owner.organization,
                                user=owner.user, created_at=owner.organization.created_at)
    api.fail_next("sendMessage", *too_many_requests(retry_after=1))
    with two_workers(api, OFFLINE_MODEL_CHUNK_DELAY_MS="5"):
        post_update(message_update(OLIVIA_TG, "Search my notes for budget"))
        wait_until(last_turn_done(), timeout=90)
    refused = api.of("sendMessage", ok_only=False)
    assert [c.answered for c in refused] == [429, 200]
    assert refused[1].at - refused[0].at >= 1.0  # Telegram's retry_after was honoured
    assert "No notes matched" in api.texts_to(OLIVIA_TG)[-1]
    assert Message.objects.filter(role="user").count() == 1


def test_an_unlinked_user_gets_instructions_and_nothing_is_stored(owner, telegram_on):
    api = telegram_on
    with two_workers(api):
        post_update(message_update(STRANGER_TG, "Search my notes for budget"))
        wait_until(lambda: api.of("sendMessage"), timeout=60)
    assert "link your account" in api.of("sendMessage")[0].params["text"]
    assert api.of("sendMessage")[0].params["chat_id"] == STRANGER_TG
    assert not Thread.objects.exists() and not Message.objects.exists() and not TelegramLink.objects.exists()
    assert list(ReceivedUpdate.objects.values_list("update_id", flat=True)) != []  # only the update's number


def test_thirty_messages_in_one_conversation_use_the_window_never_full(owner, telegram_on):
    """A history bound this small would make a browser conversation full after
    a few turns; the Telegram one goes on, each turn sent its window."""
    api = telegram_on
    TelegramLink.objects.create(telegram_user_id=OLIVIA_TG, chat_id=OLIVIA_TG, organization=owner.organization,
                                user=owner.user, created_at=owner.organization.created_at)
    with two_workers(api, OFFLINE_MODEL_CHUNK_DELAY_MS="0", ASSISTANT_HISTORY_BYTES="1000", HISTORY_WINDOW="20"):
        for number in range(30):
            post_update(message_update(OLIVIA_TG, f"Search my notes for item {number}"))
            wait_until(lambda n=number: Turn.objects.filter(status="done").count() == n + 1 and
                       not StreamedReply.objects.exists(), timeout=90)
    thread = Thread.objects.get()
    assert Turn.objects.filter(thread=thread, status="done").count() == 30
    assert Message.objects.filter(thread=thread, role="user").count() == 30
    assert not Message.objects.filter(thread=thread).exclude(notice="").exists()
    assert len(api.of("sendMessage")) == 30

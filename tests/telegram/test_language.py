"""The bot answers in the person's language: the one they chose in the web app,
else their Telegram app's (`language_code`) when the product speaks it, else
English; and one person's language never stays on the worker thread for the
next person's update."""

import pytest
from django.utils import translation

from assistant_engine.organizations.services import preferred_language_set
from assistant_engine.surfaces.telegram import handlers
from assistant_engine.surfaces.telegram.follow import follow_turn
from assistant_engine.surfaces.telegram.linking import link_code_create
from assistant_engine.surfaces.telegram.models import StreamedReply, TelegramLink
from assistant_engine.surfaces.telegram.replies import LONG_REPEAT
from assistant_engine.surfaces.telegram.services import callback_data, card_buttons
from tests.telegram.conftest import COLIN_TG, OLIVIA_TG, STRANGER_TG, click_update, message_update, post_update
from tests.telegram.test_cards import card, click  # noqa: F401 (a fixture and a helper reused)
from tests.telegram.test_end_to_end import last_turn_done
from tests.telegram.test_linking import linked
from tests.workers import celery_worker, wait_until
from workspace.models import Note

HELP = {"en": "Send a message to talk to the assistant.", "de": "Senden Sie eine Nachricht, um mit dem Assistenten",
        "fr": "Envoyez un message pour parler à l’assistant."}
INSTRUCTIONS = {"en": "This bot is the assistant of your organization.", "fr": "Ce bot est l’assistant de votre"}


def said(telegram_id: int, text: str, language_code: str | None) -> list[str]:
    outcome = handlers.handle_update(message_update(telegram_id, text, language_code=language_code))
    return [kwargs["text"] for name, kwargs in outcome.calls if name == "send_html"]


def wire_buttons(api) -> list[str]:
    [with_buttons] = [c for c in api.of("sendMessage") if c.params.get("reply_markup")]
    return [button["text"] for button in with_buttons.params["reply_markup"]["inline_keyboard"][0]]


@pytest.mark.django_db
def test_a_person_who_chose_german_on_the_web_is_answered_in_german(owner, card, telegram_on):  # noqa: F811
    preferred_language_set(user_id=owner.user.id, language="de")
    # Their Telegram app says French: the web choice wins, from the linking answer on.
    [linked_answer] = said(OLIVIA_TG, f"/start {link_code_create(owner.member).code}", "fr")
    assert linked_answer.startswith("Verknüpft mit <b>Acme</b> als olivia. " + HELP["de"])
    [help_answer] = said(OLIVIA_TG, "/help", "fr")
    assert help_answer.startswith(HELP["de"]) and "/credits zeigt den Stand des Monats" in help_answer
    assert said(OLIVIA_TG, "/start not-a-code", "fr") == [
        "Dieser Code ist nicht gültig (unbekannt, bereits verwendet oder abgelaufen). Fordern Sie auf der "
        "Telegram-Seite einen neuen an."]
    assert said(OLIVIA_TG, "/stop", "fr") == ["In dieser Unterhaltung wird gerade keine Antwort geschrieben."]

    # The card as the follow task sends it, in the language the update passed on.
    StreamedReply.objects.create(turn_id=card.turn_id, chat_id=OLIVIA_TG)
    assert follow_turn(card.turn_id, slice_seconds=5, sleep=lambda s: None, language="de") is False
    assert wire_buttons(telegram_on) == ["Bestätigen", "Abbrechen"]
    assert "<b>Notiz löschen</b>" in telegram_on.texts_to(OLIVIA_TG)[-1]

    answer, edits = click(OLIVIA_TG, callback_data(card, confirm=True))
    assert answer == "Erledigt."
    assert "Notiz löschen" in edits[0]["text"] and "✅ Bestätigt." in edits[0]["text"]
    assert click(OLIVIA_TG, callback_data(card, confirm=True))[0] == (
        "Über diese Karte wurde bereits entschieden; es wurde nichts ausgeführt.")


@pytest.mark.django_db
def test_without_a_web_choice_telegrams_language_code_is_used(owner, telegram_on):
    linked(owner)
    [help_answer] = said(OLIVIA_TG, "/help", "fr")
    assert help_answer.startswith(HELP["fr"]) and "/new commence une nouvelle conversation" in help_answer
    [instructions] = said(STRANGER_TG, "hello", "fr-CA")  # a regional variant: its language
    assert instructions.startswith(INSTRUCTIONS["fr"])
    assert said(OLIVIA_TG, "/new", "it") == [
        "Una nuova conversazione inizia con il tuo prossimo messaggio. Quella precedente resta tra le tue "
        "conversazioni nel browser."]


@pytest.mark.django_db
@pytest.mark.parametrize("language_code", ["pt-br", "", None, "x" * 600])
def test_a_language_the_product_does_not_speak_gets_the_default(owner, telegram_on, language_code):
    linked(owner)
    [help_answer] = said(OLIVIA_TG, "/help", language_code)
    assert help_answer.startswith(HELP["en"])
    [instructions] = said(STRANGER_TG, "hello", language_code)
    assert instructions.startswith(INSTRUCTIONS["en"])


@pytest.mark.django_db
def test_one_persons_language_never_stays_on_the_thread_for_the_next(owner, colleague, card,  # noqa: F811
                                                                     telegram_on):
    preferred_language_set(user_id=owner.user.id, language="de")
    linked(owner)
    linked(colleague, COLIN_TG)
    before = translation.get_language()

    assert said(OLIVIA_TG, "/help", "fr")[0].startswith(HELP["de"])
    assert translation.get_language() == before
    assert click(OLIVIA_TG, callback_data(card, confirm=False))[0] == "Abgebrochen."
    assert translation.get_language() == before
    StreamedReply.objects.create(turn_id=card.turn_id, chat_id=OLIVIA_TG)
    follow_turn(card.turn_id, slice_seconds=5, sleep=lambda s: None, language="de")
    assert translation.get_language() == before

    # The next update on this thread is the colleague's, who chose nothing and whose app says Portuguese.
    assert said(COLIN_TG, "/help", "pt-br")[0].startswith(HELP["en"])
    outcome = handlers.handle_update(click_update(COLIN_TG, callback_data(card, confirm=True), message_id=55,
                                                  language_code="pt-br"))
    assert outcome.calls[0][1]["text"] == "This card is not yours or no longer exists; nothing was done."
    assert [label for label, _ in card_buttons(card)] == ["Confirm", "Cancel"]


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_through_one_worker_thread_german_cards_then_the_next_person_in_english(owner, telegram_on):
    """One worker, one thread: the German person's turn, card and click, then a
    stranger's message, all at the wire."""
    from tests.telegram.conftest import worker_env

    api = telegram_on
    TelegramLink.objects.create(telegram_user_id=OLIVIA_TG, chat_id=OLIVIA_TG, organization=owner.organization,
                                user=owner.user, created_at=owner.organization.created_at)
    preferred_language_set(user_id=owner.user.id, language="de")
    Note.objects.create(organization=owner.organization, owner=owner.user, title="Groceries", body="milk")
    with celery_worker(name="tglang", concurrency=1, **worker_env(api, OFFLINE_MODEL_CHUNK_DELAY_MS="5")):
        post_update(message_update(OLIVIA_TG, "Delete the note Groceries"))
        wait_until(last_turn_done(), timeout=90)
        assert wire_buttons(api) == ["Bestätigen", "Abbrechen"]
        card_message = next(c for c in api.of("sendMessage") if c.params.get("reply_markup"))
        assert "<b>Notiz löschen</b>" in card_message.params["text"]
        confirm = card_message.params["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
        post_update(click_update(OLIVIA_TG, confirm, message_id=card_message.params["_message_id"]))
        wait_until(lambda: api.of("answerCallbackQuery") and api.of("editMessageText"), timeout=60)
        post_update(message_update(STRANGER_TG, "hello", language_code="pt-br"))
        wait_until(lambda: api.texts_to(STRANGER_TG), timeout=60)
    assert api.of("answerCallbackQuery")[0].params["text"] == "Erledigt."
    assert "✅ Bestätigt." in api.of("editMessageText")[-1].params["text"]
    assert api.texts_to(STRANGER_TG)[0].startswith(INSTRUCTIONS["en"])


@pytest.mark.django_db
def test_a_stopped_reply_and_its_notice_follow_in_the_updates_language(owner, telegram_on):
    preferred_language_set(user_id=owner.user.id, language="de")
    linked(owner)
    outcome = handlers.handle_update(message_update(OLIVIA_TG, "Hallo", language_code="en"))
    assert outcome.language == "de"  # what the task hands the follow task
    assert said(OLIVIA_TG, "/stop", "en") == [
        "Antwort wird abgebrochen… Was bisher geschrieben wurde, bleibt in der Unterhaltung."]
    assert follow_turn(outcome.follow_turn, slice_seconds=5, sleep=lambda s: None, language=outcome.language) is False
    # The notice is stored in English, as the model's bookkeeping; the chat shows it translated, as the browser does.
    assert telegram_on.texts_to(OLIVIA_TG) == ["<i>Sie haben diese Antwort abgebrochen.</i>"]


# Every text handle_click puts in `answer_callback` (the toast over the card).
CLICK_ANSWERS = [*handlers.CARD_REFUSALS.values(), handlers.LINK_FIRST, handlers.SUSPENDED, handlers.INVALID_BUTTON,
                 handlers.CARD_NOT_FOUND, handlers.DONE, handlers.CANCELLED, translation.gettext_lazy(LONG_REPEAT)]


@pytest.mark.parametrize("language", ["en", "de", "fr", "it"])
def test_every_telegram_click_answer_fits_telegrams_200_characters(language):
    """answerCallbackQuery refuses a text over 200 characters (counted in
    UTF-16 units, as Telegram counts): the German repeat refusal was 204, so the
    click's answer failed (the reviewer's finding)."""
    with translation.override(language):
        lengths = {str(text)[:40]: len(str(text).encode("utf-16-le")) // 2 for text in CLICK_ANSWERS}
    assert {start: length for start, length in lengths.items() if length > 200} == {}

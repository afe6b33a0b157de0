"""The offline demo model through the real loop and the real services: a short
exchange in one conversation ("search", "open the second one", "delete it"),
"did the e-mail go out?" after the person decided its card, and the language
the person chose on their account reaching the model in the system prompt."""

from assistant import cards
from assistant.chat import chat_submit
from assistant.loop import run_turn
from assistant.models import ActionCard
from assistant_engine.organizations.services import preferred_language_set
from assistant_engine.providers.clients.offline import OfflineModelClient
from assistant_engine.providers.clients.offline_phrases import say
from conversations.models import Message
from tests.assistant.conftest import Clock
from workspace.models import Note, SentEmail


def say_to(person, message, conversation_id=None):
    """One turn of the offline model; (the conversation's id, the reply's text)."""
    submitted = chat_submit(person.member, message=message, conversation_id=conversation_id)
    run_turn(submitted.turn_id, client=OfflineModelClient(), clock=Clock())
    reply = Message.objects.filter(thread_id=submitted.thread_id, role="assistant").order_by("seq").last()
    return submitted.thread_id, reply.content


def budgets(owner):
    older = Note.objects.create(organization=owner.organization, owner=owner.user, title="Budget 2026", body="Old.")
    newer = Note.objects.create(organization=owner.organization, owner=owner.user, title="Budget 2027", body="New.")
    return newer, older  # the search lists the most recently updated first


def test_open_the_second_one_then_delete_it(owner):
    newer, older = budgets(owner)
    thread, reply = say_to(owner, "search my notes for budget")
    assert reply == 'I found 2 notes: "Budget 2027", "Budget 2026".'
    _, reply = say_to(owner, "open the second one", thread)
    assert reply == 'The note "Budget 2026" says: Old.'
    _, reply = say_to(owner, "delete it", thread)
    card = ActionCard.objects.get(thread_id=thread)
    assert card.tool_name == "delete_note" and card.tool_input == {"note_id": older.id}
    assert reply.startswith("I have proposed this on a card: Delete the note") and "Budget 2026" in reply
    assert Note.objects.filter(id=older.id).exists()  # nothing done before the person confirms


def test_the_same_exchange_in_german_for_a_person_who_chose_german(owner):
    newer, older = budgets(owner)
    preferred_language_set(user_id=owner.user.id, language="de")
    thread, reply = say_to(owner, "durchsuche meine Notizen nach Budget")
    assert reply == 'Ich habe 2 Notizen gefunden: "Budget 2027", "Budget 2026".'
    _, reply = say_to(owner, "öffne die erste", thread)
    assert reply == 'Die Notiz "Budget 2027" sagt: New.'


def test_the_chosen_language_wins_over_the_words(owner):
    preferred_language_set(user_id=owner.user.id, language="it")
    _, reply = say_to(owner, "What's the weather like?")
    assert reply == say("it", "help")


def test_did_the_email_go_out_after_the_person_confirmed_it(owner):
    thread, _ = say_to(owner, "email See you at noon to alice@example.com")
    _, reply = say_to(owner, "did the e-mail go out?", thread)
    assert reply == say("en", "mail_pending", subject="See you at noon", to="alice@example.com")
    card = ActionCard.objects.get(thread_id=thread)
    cards.card_confirm(owner.member, card_id=card.id, shown_hash=card.snapshot_hash)
    assert SentEmail.objects.filter(to="alice@example.com").count() == 1
    _, reply = say_to(owner, "did the e-mail go out?", thread)
    assert reply == 'Yes: you confirmed the e-mail "See you at noon" to alice@example.com, and it went out.'


def test_did_the_email_go_out_in_french_after_the_person_cancelled_it(owner):
    preferred_language_set(user_id=owner.user.id, language="fr")
    thread, _ = say_to(owner, "envoie un e-mail à alice@example.com : À midi")
    card = ActionCard.objects.get(thread_id=thread)
    cards.card_cancel(owner.member, card_id=card.id)
    _, reply = say_to(owner, "L'e-mail est-il parti ?", thread)
    assert reply == 'Non : vous avez annulé l\'e-mail "À midi" à alice@example.com, rien n\'a été envoyé.'
    assert not SentEmail.objects.exists()

"""The offline demo model in German, French and Italian: the examples its help
gives in each language ask for what the English ones ask; it answers in the
language the person chose (named in the system prompt), else in the language
they wrote; follow-ups refer back to what it listed; "did the e-mail go out?"
is answered from the cards the application told of; "what can you render?"
shows Markdown, a table, code and a formula."""

import json
import re

import pytest

from assistant.app_events import render_events
from assistant.instructions import system_prompt
from assistant_engine.foundation.markdown import render_markdown
from assistant_engine.providers.clients import offline
from assistant_engine.providers.clients.base import AssistantReply, ToolResult, ToolResults, ToolUse, UserText
from assistant_engine.providers.clients.offline_intents import detect_language
from assistant_engine.providers.clients.offline_phrases import LANGUAGES, TEXTS, say
from tests.providers.test_offline_model import NOTES, WORKSPACE_TOOLS, calls, text
from tests.providers.test_offline_model import run as run_english

OTHERS = ["de", "fr", "it"]


def run(history, system="You help."):
    from assistant_engine.providers.clients.base import ModelRequest
    from assistant_engine.providers.clients.offline import OfflineModelClient

    return list(OfflineModelClient().stream(ModelRequest(system=system, history=history, tools=WORKSPACE_TOOLS)))


def examples(language):
    return re.findall(r'"([^"]+)"', TEXTS[language]["help"])


def shape(phrase):
    intent = offline.parse_intent(phrase)
    assert intent is not None, phrase
    return intent.action, sorted(intent.args), intent.args.get("ordinal") is None


@pytest.mark.parametrize("language", OTHERS)
def test_the_helps_examples_ask_in_each_language_what_they_ask_in_english(language):
    english = [shape(phrase) for phrase in examples("en")]
    assert [action for action, _, _ in english] == [
        "search", "pick", "pick", "inbox", "create", "read", "delete", "showcase", "mail_status", "email"]
    assert [shape(phrase) for phrase in examples(language)] == english
    assert {offline.parse_intent(phrase).language for phrase in examples(language)} == {language}


# The help's German examples, formal as all its texts, and the informal "du" a person may write instead.
GERMAN_INFORMAL = [
    "durchsuche meine Notizen nach Budget", "öffne die zweite", "lösche sie", "lies meinen Posteingang",
    "erstelle eine Notiz mit dem Titel Einkauf: Milch und Eier", "lies die Notiz Einkauf",
    "lösche die Notiz Einkauf", "was kannst du darstellen?", "ist die E-Mail rausgegangen?",
    "sende eine E-Mail an alice@example.com: Bis Mittag",
]
INFORMAL = re.compile(r"\b(?:du|dich|dir|dein\w*|kannst|willst|hast|bist)\b", re.I)


def test_the_german_texts_say_sie_and_the_help_shows_the_formal_phrasing():
    texts = [text for value in TEXTS["de"].values() for text in (value if isinstance(value, tuple) else (value,))]
    assert [text for text in texts if INFORMAL.search(text)] == []
    assert [phrase for phrase in examples("de") if not re.search(r"\bSie\b", phrase)] == [
        "ist die E-Mail rausgegangen?"]  # a question without an address
    assert "was können Sie darstellen?" in examples("de")


@pytest.mark.parametrize(("formal", "informal"), list(zip(examples("de"), GERMAN_INFORMAL, strict=True)))
def test_german_is_understood_formal_and_informal_alike(formal, informal):
    assert shape(formal) == shape(informal)
    [intent, informal_intent] = [offline.parse_intent(phrase) for phrase in (formal, informal)]
    assert (intent.language, informal_intent.language) == ("de", "de")
    assert {key: value.lower() for key, value in intent.args.items() if key != "verb"} == {
        key: value.lower() for key, value in informal_intent.args.items() if key != "verb"}


@pytest.mark.parametrize(("language", "phrase", "tool_input"), [
    ("de", "durchsuche meine Notizen nach Budget", {"query": "Budget"}),
    ("fr", "cherche budget dans mes notes", {"query": "budget"}),
    ("it", "cerca budget nelle mie note", {"query": "budget"}),
    ("de", "sende eine E-Mail an alice@example.com: Bis Mittag",
     {"to": "alice@example.com", "subject": "Bis Mittag", "body": "Bis Mittag"}),
    ("fr", "envoie un e-mail à alice@example.com : À midi",
     {"to": "alice@example.com", "subject": "À midi", "body": "À midi"}),
    ("it", "invia un'e-mail a alice@example.com: A mezzogiorno",
     {"to": "alice@example.com", "subject": "A mezzogiorno", "body": "A mezzogiorno"}),
    ("de", "erstelle eine Notiz mit dem Titel Einkauf: Milch und Eier", {"title": "Einkauf", "body": "Milch und Eier"}),
    ("de", "Durchsuchen Sie meine Notizen nach Budget", {"query": "Budget"}),
    ("de", "Senden Sie eine E-Mail an alice@example.com: Bis Mittag",
     {"to": "alice@example.com", "subject": "Bis Mittag", "body": "Bis Mittag"}),
    ("de", "Erstellen Sie eine Notiz mit dem Titel Einkauf: Milch und Eier",
     {"title": "Einkauf", "body": "Milch und Eier"}),
    ("fr", "crée une note intitulée Courses : lait et œufs", {"title": "Courses", "body": "lait et œufs"}),
])
def test_a_request_in_another_language_calls_the_same_tool(language, phrase, tool_input):
    [call] = calls(run([UserText(phrase)]))
    assert call.input == tool_input


@pytest.mark.parametrize("language", OTHERS)
def test_tool_results_are_told_in_the_language_the_person_wrote(language):
    search = examples(language)[0]
    history = [UserText(search), AssistantReply("", (ToolUse("offline_1", "search_notes", {"query": "x"}),)),
               ToolResults((ToolResult("offline_1", NOTES),))]
    assert text(run(history)) == say(language, "found", count=2, titles='"Groceries", "Groceries old"')
    assert text(run(history)) != text(run_english(history[:0] + [UserText("search my notes for x")] + history[1:]))


@pytest.mark.parametrize(("language", "sentence"), [
    ("de", "Wie ist das Wetter heute?"), ("fr", "Quel temps fait-il aujourd'hui ?"), ("it", "Che tempo fa oggi?"),
    ("en", "What's the weather like?"),
])
def test_anything_else_gets_the_help_in_the_language_of_the_sentence(language, sentence):
    assert detect_language(sentence) == language
    assert text(run([UserText(sentence)])) == TEXTS[language]["help"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_language_the_person_chose_wins_over_the_words(language):
    system = system_prompt(language=language, person="Be brief.")
    history = [UserText("read my inbox"), AssistantReply("", (ToolUse("offline_1", "read_inbox", {}),)),
               ToolResults((ToolResult("offline_1", '{"messages": []}'),))]
    assert text(run(history, system)) == say(language, "inbox_empty")
    assert text(run([UserText("Wie ist das Wetter heute?")], system)) == TEXTS[language]["help"]


def test_every_language_has_every_text():
    assert all(TEXTS[language].keys() == TEXTS["en"].keys() for language in LANGUAGES)
    assert len({TEXTS[language]["help"] for language in LANGUAGES}) == 4


# --- A short exchange -------------------------------------------------------------------------


def listed(request="search my notes for Groceries"):
    """The history once the model searched and summarised two notes (7, then 9)."""
    return [
        UserText(request), AssistantReply("", (ToolUse("offline_1", "search_notes", {"query": "Groceries"}),)),
        ToolResults((ToolResult("offline_1", NOTES),)),
        AssistantReply('I found 2 notes: "Groceries", "Groceries old".'),
    ]


def then_read(history, note_id, phrase):
    body = json.dumps({"id": note_id, "title": "Groceries old", "body": "eggs", "updated_at": "x"})
    n = len(history)
    return history + [
        UserText(phrase), AssistantReply("", (ToolUse(f"offline_{n}", "read_note", {"note_id": note_id}),)),
        ToolResults((ToolResult(f"offline_{n}", body),)), AssistantReply('The note "Groceries old" says: eggs'),
    ]


@pytest.mark.parametrize(("language", "second", "delete_it"), [
    ("en", "open the second one", "delete it"), ("de", "öffne die zweite", "lösche sie"),
    ("de", "Öffnen Sie die zweite", "Löschen Sie sie"), ("de", "Zeigen Sie mir die zweite", "Entfernen Sie sie."),
    ("fr", "ouvre la deuxième", "supprime-la"), ("it", "apri la seconda", "eliminala"),
])
def test_a_follow_up_refers_back_to_what_was_listed(language, second, delete_it):
    history = listed()
    assert [(c.name, c.input) for c in calls(run(history + [UserText(second)]))] == [("read_note", {"note_id": 9})]
    after = then_read(history, 9, second)
    assert [(c.name, c.input) for c in calls(run(after + [UserText(delete_it)]))] == [("delete_note", {"note_id": 9})]


def test_the_last_the_first_and_a_place_past_the_list():
    assert calls(run(listed() + [UserText("delete the last one")]))[0].input == {"note_id": 9}
    assert calls(run(listed() + [UserText("Show me the first")]))[0].input == {"note_id": 7}
    events = run(listed() + [UserText("open the third one")])
    assert not calls(events)
    assert text(events) == 'I listed only 2 notes: 1. "Groceries", 2. "Groceries old".'


def test_it_after_a_list_of_several_asks_which_and_with_no_list_says_so():
    assert text(run(listed() + [UserText("delete it")])) == (
        'Which one do you mean? I listed: 1. "Groceries", 2. "Groceries old".')
    assert text(run([UserText("open the second one")])) == say("en", "nothing_listed")
    assert text(run([UserText("öffne die zweite")])) == say("de", "nothing_listed")


def test_a_title_that_sounds_like_a_follow_up_stays_a_title():
    [call] = calls(run([UserText("create a note titled Read the first chapter")]))
    assert call.name == "create_note" and call.input["title"] == "Read the first chapter"


# --- Did the e-mail go out? ---------------------------------------------------------------------

MAIL = {"to": "alice@example.com", "subject": "See you at noon", "body": "See you at noon"}


def proposed_mail():
    card = {"status": "awaiting_confirmation", "card_id": "card-1", "description": "Send an e-mail"}
    return [UserText("email See you at noon to alice@example.com"),
            AssistantReply("", (ToolUse("offline_1", "send_email", MAIL),)),
            ToolResults((ToolResult("offline_1", json.dumps(card)),)),
            AssistantReply("I have proposed this on a card: Send an e-mail. Nothing is done unless you confirm it.")]


def told(kind, summary="Done."):
    return render_events([{"kind": kind, "card_id": "card-1", "tool_name": "send_email", "summary": summary,
                           "input": json.dumps(MAIL)}])


@pytest.mark.parametrize(("kind", "summary", "expected"), [
    ("confirmed", "Confirmed by the person and done: Send. Result: {}",
     'Yes: you confirmed the e-mail "See you at noon" to alice@example.com, and it went out.'),
    ("confirmed", "Confirmed by the person, still being carried out: Send.",
     'You confirmed the e-mail "See you at noon" to alice@example.com; it was still being sent when I was told.'),
    ("cancelled", "Cancelled",
     'No: you cancelled the e-mail "See you at noon" to alice@example.com, so nothing was sent.'),
    ("expired", "Expired", 'No: the card for the e-mail "See you at noon" to alice@example.com expired without a '
                           "decision; nothing was sent."),
    ("failed", "Not done", 'No: sending the e-mail "See you at noon" to alice@example.com failed.'),
    ("outcome_unknown", "Interrupted", 'I don\'t know: sending the e-mail "See you at noon" to alice@example.com was '
                                       "interrupted before its outcome was recorded. Look in your sent mail before "
                                       "sending it again."),
])
def test_did_the_email_go_out_is_answered_from_the_told_card(kind, summary, expected):
    history = proposed_mail() + [UserText(told(kind, summary)), UserText("Did the e-mail go out?")]
    events = run(history)
    assert text(events) == expected and not calls(events)


@pytest.mark.parametrize(("language", "question"), [
    ("de", "Ist die E-Mail rausgegangen?"), ("fr", "L'e-mail est-il parti ?"), ("it", "L'e-mail è partita?"),
    ("en", "has the email been sent?"),
])
def test_did_the_email_go_out_in_each_language(language, question):
    history = proposed_mail() + [UserText(told("cancelled") + "\n" + question)]
    assert text(run(history)) == say(language, "mail_cancelled", subject="See you at noon", to="alice@example.com")


def test_an_email_still_on_its_card_and_no_email_at_all():
    assert text(run(proposed_mail() + [UserText("did the email go out?")])) == (
        'Not yet: the e-mail "See you at noon" to alice@example.com waits for your confirmation on its card.')
    assert text(run([UserText("did the email go out?")])) == "I have not proposed any e-mail in this conversation."


# --- What can you render? -----------------------------------------------------------------------


@pytest.mark.parametrize(("language", "question"), [
    ("en", "What can you render?"), ("de", "Was kannst du darstellen?"), ("de", "Was können Sie darstellen?"),
    ("fr", "Que peux-tu afficher ?"),
    ("it", "Cosa puoi mostrare?"),
])
def test_what_can_you_render_shows_markdown_a_table_code_and_a_formula(language, question):
    reply = text(run([UserText(question)]))
    assert reply == TEXTS[language]["showcase"]
    html = render_markdown(reply)
    assert "<h2>" in html and "<strong>" in html and "<em>" in html and "<li>" in html
    assert "<table>" in html and html.count("<tr>") == 4
    assert '<pre data-lang="python">' in html and '<span class="tok-k">def</span>' in html  # highlighted
    assert '<span class="math">E = mc^2</span>' in html  # the formulas, typeset by KaTeX in the page
    assert '<div class="math math--display">\\int_0^1 x^2\\,dx = \\frac{1}{3}</div>' in html


@pytest.mark.parametrize(("language", "phrase"), [
    ("de", "Fasse diese Notiz zusammen"), ("de", "Fassen Sie diese Notiz zusammen"), ("de", "Lesen Sie diese Notiz"),
    ("fr", "Résume cette note."), ("it", "Riassumi questa nota"),
])
def test_this_note_in_each_language_reads_the_open_note(language, phrase):
    opened = render_events([{"kind": "page_context", "summary": "The person has the note with id 7 open"}])
    assert [(c.name, c.input) for c in calls(run([UserText(opened + "\n" + phrase)]))] == [
        ("read_note", {"note_id": 7})]
    assert text(run([UserText(phrase)])) == say(language, "no_open_note")

"""Issue 34.3: the demo model gets the everyday follow-ups on the page it was
made for — "delete this note" / "delete it" with a note open, "who am I?",
informal German, French and Italian — and visibly follows the organization's
and the person's instructions: a name to be called by, a language, a closing
line (the organization's winning where both say one)."""

import pytest

from assistant.app_events import render_events
from assistant.instructions import system_prompt
from assistant_engine.providers.clients.base import ModelRequest, UserText
from assistant_engine.providers.clients.offline import OfflineModelClient, parse_intent
from tests.providers.test_offline_model import WORKSPACE_TOOLS, calls, text

OPEN_NOTE_12 = render_events([{"kind": "page_context", "summary": "The person has the note with id 12 open."}])


def run(said, system="You help.", *, opened=False):
    history = [UserText((OPEN_NOTE_12 + "\n" if opened else "") + said)]
    return list(OfflineModelClient().stream(ModelRequest(system=system, history=history, tools=WORKSPACE_TOOLS)))


@pytest.mark.parametrize("said", ["delete this note", "Delete the open note", "delete it", "Lösche diese Notiz",
                                  "lösch sie", "Supprime cette note", "supprime-la", "Elimina questa nota",
                                  "eliminala"])
def test_delete_this_note_or_it_with_a_note_open_proposes_deleting_that_note(said):
    [call] = calls(run(said, opened=True))
    assert (call.name, call.input) == ("delete_note", {"note_id": 12})


def test_without_a_note_open_it_says_so():
    assert "open a note" in text(run("delete this note"))
    assert not calls(run("delete it"))


@pytest.mark.parametrize(("said", "query", "language"), [
    ("Suche in meinen Notizen nach Budget", "Budget", "de"), ("such in den Notizen nach Reise", "Reise", "de"),
    ("Cherche dans mes notes budget", "budget", "fr"), ("Cerca nelle mie note budget", "budget", "it"),
])
def test_everyday_searches(said, query, language):
    intent = parse_intent(said)
    assert (intent.action, intent.args, intent.language) == ("search", {"query": query}, language)


@pytest.mark.parametrize(("said", "expected"), [
    ("who am I?", "You are Ada Lovelace, in the organization Acme."),
    ("Wer bin ich?", "Sie sind Ada Lovelace, in der Organisation Acme."),
    ("Qui suis-je ?", "Vous êtes Ada Lovelace, dans l’organisation Acme."),
    ("Chi sono?", "Sei Ada Lovelace, nell’organizzazione Acme."),
])
def test_who_am_i_is_answered_from_the_system_prompt(said, expected):
    assert text(run(said, system_prompt(identity=("Ada Lovelace", "Acme")))) == expected


def test_who_am_i_without_an_identity():
    assert text(run("who am I?")) == "I don't know who you are: this conversation doesn't say."


def test_a_name_to_be_called_by_a_language_and_a_closing_line_are_followed():
    system = system_prompt(organization="End every reply with: Your Acme team", person="Call me Ada. Answer in French.")
    reply = text(run("who am I?", system))
    assert reply.startswith("Ada, ") and reply.endswith("\n\nYour Acme team")
    assert "cette conversation" in reply  # in French, as asked


@pytest.mark.parametrize(("organization", "person", "name", "closing"), [
    ("", "Nenne mich Käpt'n Blaubär.", "Käpt'n Blaubär", ""),
    ("Termine chaque réponse par « Bonne journée ».", "Appelle-moi Zoé", "Zoé", "Bonne journée"),
    ("Sign off with: The Acme bot", "Sign off with: Cheers", "", "The Acme bot"),
    ("", "chiamami Luca e termina ogni risposta con Ciao!", "Luca", "Ciao!"),
])
def test_instructions_in_every_language_and_the_organizations_win(organization, person, name, closing):
    reply = text(run("what can you render?", system_prompt(organization=organization, person=person)))
    assert reply.startswith(f"{name}, ") if name else not reply.startswith(",")
    assert reply.endswith(f"\n\n{closing}") if closing else "\n\n" in reply


def test_a_tool_call_step_says_nothing_extra():
    system = system_prompt(person="Call me Ada. End every reply with: Bye")
    events = run("search my notes for budget", system)
    assert calls(events) and text(events) == ""

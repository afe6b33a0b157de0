"""The host product's pages (/notes/, /inbox/, /sent/): the fixed cast, each
with the assistant panel; another person's note is 404; anonymous → login."""

import pytest
from django.test import Client

from tests.workspace.conftest import message_to
from workspace.models import Note, SentEmail

pytestmark = pytest.mark.django_db


def browser(person) -> Client:
    client = Client()
    client.force_login(person.user)
    return client


@pytest.mark.parametrize("url", ["/notes/", "/inbox/", "/sent/"])
def test_each_page_has_the_panel_and_anonymous_goes_to_login(owner, url):
    response = browser(owner).get(url)
    html = response.content.decode()
    assert response.status_code == 200
    assert 'aria-label="Assistant"' in html and "data-assistant-launcher" in html
    assert "<assistant-chat" in html and 'data-mode="panel"' in html
    anonymous = Client().get(url)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/login/")


def test_the_list_shows_only_the_persons_notes(owner, owner_note, colleague_note, outsider_note):
    html = browser(owner).get("/notes/").content.decode()
    assert f'data-note-id="{owner_note.id}"' in html
    assert "Colleague plan" not in html and "Outsider plan" not in html


def test_create_open_edit_and_delete_a_note(owner):
    client = browser(owner)
    created = client.post("/notes/", {"title": "Groceries", "body": "milk"})
    note = Note.objects.get(owner=owner.user)
    assert created.status_code == 302 and created["Location"] == f"/notes/{note.id}/"
    page = client.get(f"/notes/{note.id}/").content.decode()
    assert "Groceries" in page and 'data-context-kind="note"' in page and f'data-context-id="{note.id}"' in page
    edited = client.post(f"/notes/{note.id}/", {"title": "Shopping", "body": "milk, eggs"})
    note.refresh_from_db()
    assert edited.status_code == 302 and (note.title, note.body) == ("Shopping", "milk, eggs")
    assert client.post(f"/notes/{note.id}/delete").status_code == 302
    assert not Note.objects.filter(id=note.id).exists()


def test_a_bad_note_is_refused_and_nothing_written(owner):
    response = browser(owner).post("/notes/", {"title": "", "body": "x"})
    assert response.status_code == 400 and not Note.objects.exists()


@pytest.mark.parametrize("who", ["colleague", "outsider"])
def test_another_persons_note_is_not_found(request, owner_note, who):
    client = browser(request.getfixturevalue(who))
    assert client.get(f"/notes/{owner_note.id}/").status_code == 404
    assert client.post(f"/notes/{owner_note.id}/", {"title": "x", "body": "y"}).status_code == 404
    assert client.post(f"/notes/{owner_note.id}/delete").status_code == 404
    owner_note.refresh_from_db()
    assert owner_note.title == "Plan"


def test_a_note_id_past_a_bigint_is_not_found(owner):
    assert browser(owner).get(f"/notes/{2**64}/").status_code == 404


def test_inbox_and_sent_are_the_persons_own(owner, colleague):
    message_to(owner, subject="For the owner")
    message_to(colleague, subject="For the colleague")
    SentEmail.objects.create(organization=colleague.organization, sender=colleague.user, from_address="c@x.org",
                             to="a@example.com", subject="Colleague mail", body="b")
    client = browser(owner)
    inbox = client.get("/inbox/").content.decode()
    assert "For the owner" in inbox and "For the colleague" not in inbox
    assert "Colleague mail" not in client.get("/sent/").content.decode()



@pytest.mark.parametrize("language, heading, panel", [
    ("de", "Ihre Notizen", "Assistenten schließen"), ("fr", "Vos notes", "Fermer l’assistant"),
    ("it", "Le tue note", "Chiudi l’assistente"), ("en", "Your notes", "Close the assistant"),
])
def test_the_pages_and_the_panel_speak_the_persons_language(owner, language, heading, panel):
    html = browser(owner).get("/notes/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    assert heading in html and panel in html

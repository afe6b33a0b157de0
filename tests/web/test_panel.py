"""The panel's state (POST /assistant/panel/state, kept in the session), its
conversation (GET /assistant/panel/chat) and the {% assistant_panel %} tag:
the fixed cast, bad input, another person's conversation or note."""

import json
import re

import pytest
from django.contrib.auth.models import AnonymousUser
from django.template import Context, Template
from django.test import RequestFactory

from tests.conversations.factories import make_thread
from tests.web.conftest import web_client
from workspace.models import Note

pytestmark = pytest.mark.django_db
STATE = "/assistant/panel/state"


def save(client, **state):
    return client.post(STATE, json.dumps(state), content_type="application/json")


def test_the_state_is_kept_for_the_next_page(owner):
    thread = make_thread(owner, messages=2)
    client = web_client(owner)
    assert save(client, open=True, conversationId=str(thread.id)).status_code == 204
    html = client.get("/inbox/").content.decode()
    assert f'data-conversation-id="{thread.id}"' in html
    assert 'data-assistant-panel data-state-url="/assistant/panel/state" data-chat-url="/assistant/panel/chat">' in html
    assert save(client, open=False, conversationId=None).status_code == 204
    html = client.get("/inbox/").content.decode()
    assert 'data-conversation-id=""' in html and 'data-chat-url="/assistant/panel/chat" hidden>' in html


@pytest.mark.parametrize("who", ["colleague", "outsider"])
def test_another_persons_conversation_is_not_found(request, owner, who):
    thread = make_thread(owner, messages=2)
    client = web_client(request.getfixturevalue(who))
    response = save(client, conversationId=str(thread.id))
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    assert str(thread.id) not in client.get("/notes/").content.decode()


@pytest.mark.parametrize("body, code", [
    ("not json", "malformed_json"), ("[]", "invalid"), ('{"open": "yes"}', "invalid"), ('{"other": 1}', "invalid"),
    ('{"conversationId": "nope"}', "not_found"),
])
def test_bad_input_is_refused(owner, body, code):
    response = web_client(owner).post(STATE, body, content_type="application/json")
    assert response.status_code in (400, 404) and response.json()["code"] == code


def test_anonymous_is_refused(client):
    assert client.post(STATE, "{}", content_type="application/json").status_code == 401
    assert client.get("/assistant/panel/chat", HTTP_ACCEPT="text/html").status_code == 401


def test_a_deleted_conversation_gives_a_new_one(owner):
    thread = make_thread(owner, messages=2)
    client = web_client(owner)
    save(client, conversationId=str(thread.id))
    thread.delete()
    html = client.get("/assistant/panel/chat", HTTP_ACCEPT="text/html").content.decode()
    assert html.lstrip().startswith("<assistant-chat") and 'data-conversation-id=""' in html


def render_tag(person, source):
    request = RequestFactory().get("/")
    request.user = person.user if person else AnonymousUser()
    request.session = web_client(person).session if person else {}
    return Template("{% load assistant %}" + source).render(Context({"request": request}))


def test_the_tag_renders_nothing_for_anonymous():
    assert render_tag(None, "{% assistant_panel %}") == ""


def test_the_tag_checks_the_page_context_against_the_persons_rights(owner, colleague):
    mine = Note.objects.create(organization=owner.organization, owner=owner.user, title="Mine")
    theirs = Note.objects.create(organization=colleague.organization, owner=colleague.user, title="Theirs")
    shown = render_tag(owner, f'{{% assistant_panel context_kind="note" context_id={mine.id} %}}')
    assert f'data-context-kind="note" data-context-id="{mine.id}"' in shown and "“Mine”" in shown
    assert re.search(r"<span data-credits-value>\d+</span>&nbsp;credits left", shown)  # without the top bar's context
    hidden = render_tag(owner, f'{{% assistant_panel context_kind="note" context_id={theirs.id} %}}')
    assert "data-context-kind" not in hidden and "Theirs" not in hidden

"""Long conversations as people see them (issue 32): the organization's choice
on its page, the divider where the summary takes over (chat page, panel,
Telegram), and the API saying which messages the model receives whole."""

import json
from datetime import timedelta
from html import unescape

import pytest
from django.utils import timezone

from assistant.loop import run_turn
from assistant.models import Turn
from assistant_engine.organizations.models import Organization, OrganizationChange
from assistant_engine.surfaces.telegram.replies import turn_view
from conversations.models import Message, Summary
from tests.assistant.conftest import Clock
from tests.assistant.test_long_conversations import seed_conversation
from tests.conftest import make_person
from tests.web.conftest import web_client

DIVIDER = "Earlier messages are summarized for the assistant"


@pytest.fixture
def summarized(owner, settings):
    """A 120-message conversation whose next turn outgrew a 16,000-token window and summarized."""
    settings.ASSISTANT_CONTEXT_WINDOW_TOKENS = 16_000
    settings.OFFLINE_MODEL_CHUNK_DELAY_MS = 0
    thread = seed_conversation(owner, 120)
    from assistant.chat import chat_submit

    turn_id = chat_submit(owner.member, message="Where were we?", conversation_id=thread.id).turn_id
    run_turn(turn_id, clock=Clock())
    assert Turn.objects.get(id=turn_id).status == "done"
    return thread, turn_id, Summary.objects.get(thread=thread)


def test_an_admin_chooses_the_history_mode_and_the_change_is_said(acme):
    admin = web_client(make_person("ada", acme, role="admin"))
    assert 'name="mode"' in admin.get("/organization/").content.decode()
    assert admin.post("/organization/history-mode", {"mode": "window"}).status_code == 302
    assert Organization.objects.get(pk=acme.pk).history_mode == "window"
    change = OrganizationChange.objects.get(action=OrganizationChange.Kind.HISTORY_MODE)
    assert change.detail == "window"
    page = unescape(admin.get("/organization/").content.decode())
    assert "chose to send the assistant only the most recent messages of long conversations" in page


def test_the_chat_page_and_the_panel_show_the_divider_before_the_first_message_sent_whole(owner, summarized):
    thread, _turn_id, summary = summarized
    client = web_client(owner)
    first_whole = Message.objects.filter(thread=thread, seq__gte=summary.through_seq).order_by("seq").first()
    # The panel of the product's pages shows the conversation it has open.
    opened = client.post("/assistant/panel/state", json.dumps({"open": True, "conversationId": str(thread.id)}),
                         content_type="application/json")
    assert opened.status_code == 204
    for url in (f"/c/{thread.id}/", "/notes/"):
        page = unescape(client.get(url).content.decode())
        assert DIVIDER in page, url
        # Every message is still on the page; the divider sits right before the first one sent whole.
        assert all(f">#{seq} The quarterly" in page for seq in range(120))
        assert page.index(DIVIDER) < page.index(f"#{first_whole.seq} ") and \
            page.index(f"#{first_whole.seq - 1} ") < page.index(DIVIDER)
        assert summary.content.splitlines()[1] in page  # readable on demand (a <details>)


def test_a_conversation_never_summarized_has_no_divider(owner):
    thread = seed_conversation(owner, 4)
    assert DIVIDER not in web_client(owner).get(f"/c/{thread.id}/").content.decode()


def test_the_api_says_which_messages_the_model_receives_whole(owner, colleague, summarized):
    thread, _turn_id, summary = summarized
    document = owner.client.get(f"/api/conversations/{thread.id}").json()
    assert len(document["messages"]) == 122
    by_id = {m["id"]: m for m in document["messages"]}
    assert document["summary"]["content"] == summary.content
    last = Message.objects.get(thread=thread, seq=summary.through_seq - 1)
    first = Message.objects.get(thread=thread, seq=summary.through_seq)
    assert document["summary"]["summarizedThrough"] == str(last.client_id) in by_id
    assert document["summary"]["firstMessageInFull"] == str(first.client_id) in by_id
    # Another person's conversation stays not found, its summary with it.
    assert colleague.client.get(f"/api/conversations/{thread.id}").status_code == 404


def test_a_conversation_without_summary_says_null(owner):
    thread = seed_conversation(owner, 2)
    assert owner.client.get(f"/api/conversations/{thread.id}").json()["summary"] is None


def test_telegram_says_it_with_the_reply_of_the_turn_that_summarized(owner, summarized):
    _thread, turn_id, _summary = summarized
    view = turn_view(turn_id)
    assert DIVIDER in view.chunks[0]


def test_a_rewrite_of_summarized_messages_forgets_the_summary_and_a_later_append_keeps_it(owner, summarized):
    thread, _turn_id, summary = summarized
    document = owner.client.get(f"/api/conversations/{thread.id}").json()
    for key in ("id", "userId", "status", "model", "cards", "summary"):
        document.pop(key, None)
    # The client uploads it back with one message added at the end: the summary still holds.
    document["messages"].append({"id": "8b0c2a7e-0000-4000-8000-000000000001", "role": "user", "content": "Hi",
                                 "createdAt": document["updatedAt"]})
    document["updatedAt"] = (timezone.now() + timedelta(minutes=1)).isoformat()
    assert owner.client.put(f"/api/conversations/{thread.id}", document, format="json").status_code == 200
    thread.refresh_from_db()
    assert Summary.objects.filter(thread=thread).exists() and thread.summary_seq == summary.through_seq
    # One that changes a message the summary stands for makes it untrue: it is forgotten.
    document["messages"][3]["content"] = "Changed"
    document["updatedAt"] = (timezone.now() + timedelta(minutes=2)).isoformat()
    assert owner.client.put(f"/api/conversations/{thread.id}", document, format="json").status_code == 200
    thread.refresh_from_db()
    assert not Summary.objects.filter(thread=thread).exists() and thread.summary_seq == 0

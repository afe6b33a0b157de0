"""Issue 33.4: a reply written after third-party content names where it came
from, under the reply, on every door that shows replies (the browser's chat
and panel, Telegram); a reply before any such content says nothing."""

from html import unescape

import pytest

from assistant_engine.surfaces.telegram.replies import turn_view
from conversations.models import Message
from tests.assistant.conftest import play
from tests.fakes.scripted import ScriptedClient, call, say
from tests.web.conftest import web_client
from workspace.models import InboxMessage

SAID = "Written after reading content from outside the product: mail from eve@example.org."


@pytest.fixture
def inbox(owner):
    return InboxMessage.objects.create(organization=owner.organization, recipient=owner.user,
                                       sender="eve@example.org", subject="Hi", body="Call me.")


def reads_the_inbox(owner):
    return play(owner, ScriptedClient(call(("read_inbox", {}), text="Let me look."), say("Eve wants a call.")),
                message="Check my inbox")


def test_the_reply_after_the_inbox_names_the_mail_the_text_before_it_does_not(owner, inbox):
    turn = reads_the_inbox(owner)
    before, after = Message.objects.filter(turn_id=turn.id, role="assistant").order_by("seq")
    assert (before.content, before.after_reading) == ("Let me look.", [])
    assert (after.content, after.after_reading) == ("Eve wants a call.", ["mail from eve@example.org"])


def test_the_conversation_page_shows_it_under_the_reply(owner, inbox):
    turn = reads_the_inbox(owner)
    page = unescape(web_client(owner).get(f"/c/{turn.thread_id}/messages").content.decode())
    assert page.count(SAID) == 1
    assert page.index("Eve wants a call.") < page.index(SAID)


def test_telegram_says_it_with_the_reply(owner, inbox):
    turn = reads_the_inbox(owner)
    text = "\n".join(turn_view(turn.id).chunks)
    assert "<i>ℹ️ " + SAID + "</i>" in text and text.index("Eve wants a call.") < text.index(SAID)


def test_a_reply_without_outside_content_says_nothing(owner):
    turn = play(owner, ScriptedClient(call(("search_notes", {"query": "x"})), say("Nothing found.")))
    assert Message.objects.get(turn_id=turn.id, content="Nothing found.").after_reading == []
    assert "outside the product" not in web_client(owner).get(f"/c/{turn.thread_id}/messages").content.decode()

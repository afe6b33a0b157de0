"""The product's pages with the panel open on a conversation: a pinned number
of queries, whatever the number of notes or the length of the conversation."""

import json

import pytest

from tests.conversations.factories import make_thread
from tests.web.conftest import web_client
from tests.workspace.conftest import note_of

pytestmark = pytest.mark.django_db

# The session, the person and the guard (3), the notes (1), the top bar
# (memberships, the credit account, the monthly allowance: 3), then the panel's
# conversation (thread, messages, tool calls, files, cards, running turn: 6).
NOTES_PAGE = 13


@pytest.mark.parametrize("notes, messages", [(1, 2), (20, 40)])
def test_the_notes_page_with_the_panel_is_pinned(owner, notes, messages, django_assert_num_queries):
    for number in range(notes):
        note_of(owner, title=f"Note {number}")
    client = web_client(owner)
    thread = make_thread(owner, messages=messages)
    client.post("/assistant/panel/state", json.dumps({"open": True, "conversationId": str(thread.id)}),
                content_type="application/json")
    with django_assert_num_queries(NOTES_PAGE):
        client.get("/notes/")

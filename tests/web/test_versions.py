"""Versions laid out for paging (web/versions.py): which blocks form a set, in
which order, which version is shown, where each pager goes; then the page
that renders them from a conversation regenerated and edited for real."""

import re
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from assistant.loop import run_turn
from assistant.models import Turn
from assistant_engine.web.presenters import Block, PartView
from assistant_engine.web.versions import Marker, arrange
from tests.assistant.conftest import Clock, play
from tests.fakes.scripted import ScriptedClient, say

# When a regenerate or an edit superseded a message (an edit: its reply too, at the same moment).
REGENERATED, EDITED = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC)


def user(name, *, old=None, replaces=""):
    return Block("user", "", [PartView(name, "", "done", "")], superseded=old is not None, superseded_at=old,
                 replaces=replaces)


def reply(name, *, old=None):
    return Block("assistant", f"turn-{name}", [PartView(name, "", "done", "")], superseded=old is not None,
                 superseded_at=old)


def event(text):
    return Block("event", "turn-e", text=text)


def shape(items) -> list[str]:
    """The layout in words: blocks by their id, sets as [..], versions as <..>."""
    words = []
    for item in items:
        if not isinstance(item, Marker):
            words.append(item.text or item.parts[0].id)
        elif item.kind == "open_set":
            words.append(f"[{item.of}{' awaiting' if item.awaiting else ''}")
        elif item.kind == "open_version":
            words.append(f"<{item.number}{'' if item.shown else ' hidden'}")
        elif item.kind == "pager":
            words.append(f"{item.number}/{item.count}")
        else:
            words.append("]" if item.kind == "close_set" else ">")
    return words


def test_a_conversation_without_versions_is_left_as_it_is():
    blocks = [user("u1"), reply("a1"), event("told"), user("u2"), reply("a2")]
    assert arrange(blocks) == blocks
    assert not any(block.paged for block in blocks)


def test_regenerated_replies_page_together_the_newest_shown():
    blocks = [user("u1"), reply("a1", old=REGENERATED), reply("a2", old=REGENERATED), reply("a3")]
    assert shape(arrange(blocks)) == [
        "u1", "[reply", "<1 hidden", "a1", "1/3", ">", "<2 hidden", "a2", "2/3", ">", "<3", "a3", "3/3", ">", "]",
    ]
    assert [block.paged for block in blocks] == [False, True, True, True]


def test_an_edited_message_pages_with_the_reply_that_followed_each_version():
    blocks = [user("u1", old=EDITED), reply("a1", old=EDITED), user("u2", replaces="u1"), reply("a2")]
    assert shape(arrange(blocks)) == [
        "[message", "<1 hidden", "u1", "1/2", "a1", ">", "<2", "u2", "2/2", "a2", ">", "]",
    ]


def test_a_regenerated_reply_inside_an_edited_version_is_a_set_of_its_own():
    blocks = [user("u1", old=EDITED), reply("a1", old=REGENERATED), reply("a2", old=EDITED),
              user("u2", replaces="u1"), reply("a3")]
    assert shape(arrange(blocks)) == [
        "[message", "<1 hidden", "u1", "1/2",
        "[reply", "<1 hidden", "a1", "1/2", ">", "<2", "a2", "2/2", ">", "]", ">",
        "<2", "u2", "2/2", "a3", ">", "]",
    ]


def test_what_the_model_was_told_is_never_hidden_by_paging():
    # Events told with a regenerate (between the versions) and with an edit
    # (after the old version) come before the set; those told with the next
    # message come after it.
    blocks = [user("u1", old=EDITED), reply("a1", old=REGENERATED), event("with the regenerate"),
              reply("a2", old=EDITED),
              event("with the edit"), user("u2", replaces="u1"), reply("a3"), event("with the next message"),
              user("u3"), reply("a4")]
    assert shape(arrange(blocks)) == [
        "with the regenerate", "with the edit",
        "[message", "<1 hidden", "u1", "1/2",
        "[reply", "<1 hidden", "a1", "1/2", ">", "<2", "a2", "2/2", ">", "]", ">",
        "<2", "u2", "2/2", "a3", ">", "]",
        "with the next message", "u3", "a4",
    ]


def test_a_regenerate_still_being_written_awaits_its_newest_version():
    # Until the new reply's first message exists, the latest old one is shown;
    # the page's script adds the reply being written as the newest version.
    laid_out = shape(arrange([user("u1"), reply("a1", old=REGENERATED)]))
    assert laid_out == ["u1", "[reply awaiting", "<1", "a1", "1/1", ">", "]"]


def test_what_a_regenerate_being_written_told_the_model_is_already_before_its_set():
    # Told after the old reply (it was written first), shown where it stays once the new reply exists.
    laid_out = shape(arrange([user("u1"), reply("a1", old=REGENERATED), event("told")]))
    assert laid_out == ["u1", "told", "[reply awaiting", "<1", "a1", "1/1", ">", "]"]
    done = shape(arrange([user("u1"), reply("a1", old=REGENERATED), event("told"), reply("a2")]))
    assert done[:3] == ["u1", "told", "[reply"]


def test_an_edit_still_being_answered_shows_its_new_message():
    blocks = [user("u1", old=EDITED), reply("a1", old=EDITED), user("u2", replaces="u1")]
    assert shape(arrange(blocks)) == ["[message", "<1 hidden", "u1", "1/2", "a1", ">", "<2", "u2", "2/2", ">", "]"]


def test_a_superseded_message_nothing_replaces_keeps_its_label():
    blocks = [user("u1", old=EDITED), user("u2")]  # e.g. a client's upload that lost the link
    assert arrange(blocks) == blocks and not blocks[0].paged


# --- The page, from a conversation regenerated and edited for real -------------


def regenerate_and_answer(owner, thread_id, text, *, option):
    response = owner.client.post(f"/api/conversations/{thread_id}/regenerate", format="json")
    assert response.status_code == 202, response.content
    turn_id = response.json()["turnId"]
    Turn.objects.filter(id=turn_id).update(model_option=option)
    run_turn(turn_id, client=ScriptedClient(say(text)), clock=Clock())


def shown_and_hidden(html: str) -> list[tuple[str, bool]]:
    """(version number, hidden) of each version of the page, in order."""
    return [(number, bool(hidden)) for number, hidden in re.findall(r'data-version="(\d)"( hidden)?', html)]


@pytest.mark.django_db
def test_the_page_renders_every_version_with_the_newest_shown(owner, owner_web):
    first = play(owner, ScriptedClient(say("First answer.")), message="First question")
    regenerate_and_answer(owner, first.thread_id, "Second answer.", option=first.model_option)
    html = owner_web.get(f"/c/{first.thread_id}/messages").content.decode()
    assert shown_and_hidden(html) == [("1", True), ("2", False)]
    assert "Version 1 of 2" in html and "Version 2 of 2" in html
    assert html.index("First answer.") < html.index("Second answer.")
    assert "Previous version</p>" not in html  # the pager says it
    assert html.count('data-version-step="-1" disabled') == 1 and html.count('data-version-step="1" disabled') == 1


@pytest.mark.django_db
def test_a_regenerate_being_written_is_rendered_awaiting_its_reply(owner, owner_web):
    first = play(owner, ScriptedClient(say("First answer.")), message="First question")
    assert owner.client.post(f"/api/conversations/{first.thread_id}/regenerate").status_code == 202
    html = owner_web.get(f"/c/{first.thread_id}/").content.decode()
    assert "data-awaiting" in html and shown_and_hidden(html) == [("1", False)]


@pytest.mark.django_db
def test_versions_cost_the_page_no_query(owner, owner_web, django_assert_num_queries):
    first = play(owner, ScriptedClient(say("First answer.")), message="First question")
    url = f"/c/{first.thread_id}/messages"
    owner_web.get(url)
    with CaptureQueriesContext(connection) as captured:
        owner_web.get(url)
    without_versions = len(captured)  # now: the next request resets the connection's log
    for number in range(3):
        regenerate_and_answer(owner, first.thread_id, f"Answer {number}.", option=first.model_option)
    edited = owner.client.post(f"/api/conversations/{first.thread_id}/edit", {"message": "Other"}, format="json")
    Turn.objects.filter(id=edited.json()["turnId"]).update(model_option=first.model_option)
    run_turn(edited.json()["turnId"], client=ScriptedClient(say("Other answer.")), clock=Clock())

    with django_assert_num_queries(without_versions):
        html = owner_web.get(url).content.decode()
    assert html.count("data-pager>") == 2 + 4  # the message's two versions, the first one's four replies

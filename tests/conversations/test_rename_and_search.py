"""Rename (PATCH /api/conversations/{id}), titles without Markdown syntax, and
search (GET /api/conversations?q=): full-text with an index on PostgreSQL, a
plain match on SQLite; only the person's conversations in the organization."""

import re
from datetime import timedelta

import pytest
from django.db import connection

from conversations.models import Message, Thread
from conversations.titles import derive_title
from tests.conftest import token_just_used
from tests.conversations.factories import BASE_TIME, make_thread

LIST_URL = "/api/conversations"


def url(thread) -> str:
    return f"/api/conversations/{thread.id}"


# --- Titles ---------------------------------------------------------------------


@pytest.mark.parametrize(("message", "title"), [
    ("# Plan **my** trip", "Plan my trip"),
    ("| Name | Age |\n|---|---|\n| Ann | 3 |", "Name Age Ann 3"),
    ("see [the docs](https://example.com) and `code`", "see the docs and code"),
    ("> quoted\n- item one\n- item two", "quoted item one item two"),
    ("```py\nprint(1)\n```", "print(1)"),
    ("hello   there\n\nfriend", "hello there friend"),
    ("***", "***"),  # nothing but syntax: kept rather than an empty title
])
def test_a_derived_title_has_no_markdown_syntax(message, title):
    assert derive_title(message) == title


def test_a_derived_title_is_cut_at_60_characters():
    assert derive_title("**" + ("word " * 30).strip() + "**") == ("word " * 12).strip()


def test_a_new_conversation_is_titled_from_its_first_message_without_syntax(owner, monkeypatch):
    from assistant import chat

    monkeypatch.setattr(chat, "enqueue_turn", lambda turn_id: None)
    response = owner.client.post("/api/chat", {"message": "## Budget **2027**\nplease"}, format="json")
    assert Thread.objects.get(id=response.json()["conversationId"]).title == "Budget 2027 please"


# --- Rename ---------------------------------------------------------------------


def test_owner_renames_a_conversation(owner):
    thread = make_thread(owner, title="hello there", updated_at=BASE_TIME)
    response = owner.client.patch(url(thread), {"title": "  Trip   to Zurich "}, format="json")
    assert response.status_code == 200
    assert response.json()["title"] == "Trip to Zurich" and response.json()["id"] == str(thread.id)
    thread.refresh_from_db()
    assert thread.title == "Trip to Zurich" and thread.updated_at > BASE_TIME  # an older offline copy loses


@pytest.mark.parametrize("who", ["colleague", "outsider"])
def test_others_get_404_and_the_title_stays(owner, colleague, outsider, who):
    thread = make_thread(owner, title="Mine")
    person = {"colleague": colleague, "outsider": outsider}[who]
    response = person.client.patch(url(thread), {"title": "Theirs"}, format="json")
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    thread.refresh_from_db()
    assert thread.title == "Mine"


def test_anonymous_gets_401_on_rename(owner, anonymous):
    thread = make_thread(owner, title="Mine")
    assert anonymous.patch(url(thread), {"title": "X"}, format="json").status_code == 401
    thread.refresh_from_db()
    assert thread.title == "Mine"


# `{}` is no longer refused: PATCH takes `title`, `model` or neither (issue 25; test_model_export_feedback.py).
@pytest.mark.parametrize("body", [{"title": "   "}, {"title": ""}, {"title": "x" * 201}, {"title": 12},
                                  {"title": "ok", "status": "idle"}])
def test_a_bad_rename_is_a_400_that_changes_nothing(owner, body):
    thread = make_thread(owner, title="Mine")
    response = owner.client.patch(url(thread), body, format="json")
    assert response.status_code == 400, response.content
    thread.refresh_from_db()
    assert thread.title == "Mine"


def test_a_malformed_id_is_a_400(owner):
    response = owner.client.patch("/api/conversations/nope", {"title": "X"}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "invalid_id"


# --- Search ---------------------------------------------------------------------


def say(thread, seq, content, role="user"):
    Message.objects.create(thread=thread, seq=seq, role=role, content=content, created_at=BASE_TIME)


@pytest.fixture
def library(owner, colleague, outsider):
    zurich = make_thread(owner, title="Trip to Zurich", updated_at=BASE_TIME)
    budget = make_thread(owner, title="Numbers", updated_at=BASE_TIME + timedelta(days=1))
    say(budget, 0, "What is the budget for the Zurich office?")
    other = make_thread(owner, title="Groceries", updated_at=BASE_TIME + timedelta(days=2))
    say(other, 0, "milk and eggs")
    theirs = make_thread(colleague, title="Zurich plans of a colleague")
    say(theirs, 0, "zurich budget")
    foreign = make_thread(outsider, title="Zurich elsewhere")
    say(foreign, 0, "zurich budget")
    return {"zurich": zurich, "budget": budget, "other": other}


def found(person, query):
    response = person.client.get(LIST_URL, {"q": query})
    assert response.status_code == 200, response.content
    return [item["id"] for item in response.json()["results"]]


def test_search_finds_titles_and_message_text_of_the_person_only(owner, library):
    assert found(owner, "zurich") == [str(library["budget"].id), str(library["zurich"].id)]
    assert found(owner, "Budget") == [str(library["budget"].id)]
    assert found(owner, "eggs") == [str(library["other"].id)]
    assert found(owner, "nothing-like-this") == []


def test_search_of_a_colleague_or_outsider_never_shows_the_owners(owner, colleague, outsider, library):
    owners = {str(t.id) for t in library.values()}
    assert owners.isdisjoint(found(colleague, "zurich")) and len(found(colleague, "zurich")) == 1
    assert owners.isdisjoint(found(outsider, "zurich")) and len(found(outsider, "zurich")) == 1


def test_anonymous_search_is_401(anonymous, db):
    assert anonymous.get(LIST_URL, {"q": "zurich"}).status_code == 401


def test_a_search_too_long_is_a_400(owner):
    response = owner.client.get(LIST_URL, {"q": "x" * 201})
    assert response.status_code == 400 and response.json()["code"] == "query_too_long"


@pytest.mark.parametrize("query", ["a\x00b", "\x00"])
def test_a_search_with_a_nul_is_a_400_not_a_database_error(owner, library, query):
    # PostgreSQL text can't hold a NUL: it must be refused before the query.
    response = owner.client.get(LIST_URL, {"q": query})
    assert response.status_code == 400 and response.json()["code"] == "invalid_query"


def test_the_sidebar_drops_a_nul_from_a_crafted_url(owner, library):
    from tests.web.conftest import web_client

    response = web_client(owner).get("/conversations/list", {"q": "zur\x00ich"})
    assert response.status_code == 200 and "Zurich" in response.content.decode()


def test_search_runs_a_constant_number_of_queries(owner, django_assert_num_queries):
    token_just_used(owner)
    for count in (1, 20):
        Thread.objects.all().delete()
        for day in range(count):
            say(make_thread(owner, title=f"t{day}", updated_at=BASE_TIME + timedelta(days=day)), 0, "zurich")
        # token auth, membership, the page and one row more (no COUNT: it would run the search twice)
        with django_assert_num_queries(3):
            assert len(found(owner, "zurich")) == count


def test_search_pages_say_whether_more_follow_without_a_count(owner):
    for day in range(3):
        say(make_thread(owner, title=f"t{day}", updated_at=BASE_TIME + timedelta(days=day)), 0, "zurich")
    first = owner.client.get(LIST_URL, {"q": "zurich", "pageSize": 2}).json()
    assert first["count"] is None and len(first["results"]) == 2 and "page=2" in first["next"]
    last = owner.client.get(first["next"]).json()
    assert len(last["results"]) == 1 and last["next"] is None and last["previous"]
    assert owner.client.get(LIST_URL, {"q": "zurich", "pageSize": 2, "page": 3}).status_code == 404


@pytest.mark.postgres_only
def test_postgresql_searches_within_the_persons_conversations_through_their_index(owner, library):
    """The plan starts from the person's conversations and probes the
    (thread_id, tsvector) GIN index at each: never the word's entries of
    every tenant, never to_tsvector() over all their messages."""
    if connection.vendor != "postgresql":
        pytest.skip("the index exists on PostgreSQL only")
    from conversations.selectors import thread_search
    sql, params = thread_search(owner.member, "zurich")[:20].query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")  # a tiny table: the planner would read it whole
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("SET enable_seqscan = on")
    # From the person's conversations (an index that starts with the person:
    # thread_owner_recent, or the user_id index on a tiny table), each probed by
    # its id: through message_thread_fts, or, when the statistics say a
    # conversation holds few messages, through the thread's own btree index.
    assert "thread_owner_recent" in plan or re.search(r"Index Cond: \(+user_id = \d+", plan), plan
    assert re.search(r"Index Cond: \(+(m\.)?thread_id = conversations_thread\.id", plan), plan
    assert "hashed SubPlan" not in plan, plan  # never the word's matches in every tenant first
    assert "message_content_fts" not in plan and "Seq Scan on conversations_message" not in plan, plan


def test_a_search_page_past_what_a_database_offset_holds_is_404_not_500(owner):
    """Found by schemathesis: page 204662782334552553136167321600 of a search overflowed SQLite's offset."""
    make_thread(owner, title="Zurich")
    response = owner.client.get("/api/conversations", {"q": "Zurich", "page": "204662782334552553136167321600",
                                                        "pageSize": "88"})
    assert response.status_code == 404 and response.json()["code"] == "not_found"

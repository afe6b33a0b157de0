"""Exact SQL query counts of a submission and of a turn's steps, pinned so an
N+1 or a history read per step can't creep back, and constant in the length
of the conversation. Run outside a test transaction (`transaction=True`), so
the counts are the ones production runs: no test savepoints in them."""

import uuid

import pytest

from assistant.chat import chat_submit
from assistant.history import history_bytes, load_history
from assistant.loop import run_turn
from assistant.models import Turn
from assistant_engine.organizations.members import MemberTerms, resolve_member
from assistant_engine.organizations.models import Organization
from conversations.models import Attachment, Message, Thread
from tests.assistant.conftest import PRICED_OPTION, Clock
from tests.conftest import token_just_used
from tests.fakes.scripted import ScriptedClient, call, say

pytestmark = pytest.mark.django_db(transaction=True)

# BEGIN (IMMEDIATE on SQLite) and COMMIT of a transaction: Django counts them.
TRANSACTION = 2
# Lock the thread, cards to deliver, the message and the thread's counters and
# status, the turn, then the reservation (the account's id, the person's month
# totals, ledger, and last the account's one conditional UPDATE, issue 36.3: the
# turn id is new, so no look for an earlier reservation of it).
# The organization's model choice and the person's monthly cap (issue 15) come
# with the guard's membership query (Member.terms), which the request runs anyway.
SUBMISSION = 9 + TRANSACTION
# A Member made without the guard's terms (a worker, a script) reads them: the
# model choice, the history mode (whether the conversation can be full) and the cap, one query each.
TERMS_READ = 3
# An organization that chose its model: its own keys, to check the choice is still allowed.
CHOICE_CHECK = 1
# Claim, the turn (its row is also the first call's Stop check, issue 36.2), the member, the
# history (one query: no message of it has tool calls or files); the reply (one INSERT: a quick
# step's text is written once); the finish: the turn's end (one conditional UPDATE, its row lock),
# thread, settlement (the turn's reservation row locked, holds, the person's month totals, the
# day's totals (issue 35.1), ledger, and last the account's one conditional UPDATE, issue 36.3),
# in one transaction.
TURN_BASE = 13 + TRANSACTION
# A history whose messages have tool calls and files reads them: one query each.
HISTORY_CALLS_AND_FILES = 2
# A step with one read call: the reply, the call (the Stop check before it and
# its record, in one transaction under the turn's lock; the tool's own query,
# result), the turn's progress, which is also the Stop check before the next model call.
TOOL_STEP = 6 + TRANSACTION
# Holding more before a call: the turn's reservation row locked (with its
# account), holds, the person's cap, the person's month totals, ledger, account.
HOLD = 6 + TRANSACTION


@pytest.fixture(autouse=True)
def publish_nothing(monkeypatch, settings):
    """The broker's publish is not the database's: the turns run here. The
    start reservation covers every call (the hold is pinned on its own)."""
    monkeypatch.setattr("assistant.chat.enqueue_turn", lambda turn_id: None)
    settings.CREDITS_RESERVATION = 100


@pytest.fixture
def conversation(owner):
    """A conversation of `size` messages whose last turn ended (counters kept)."""

    def make(size: int):
        first = chat_submit(owner.member, message="Hello", conversation_id=None)
        Turn.objects.filter(id=first.turn_id).update(model_option=PRICED_OPTION)
        run_turn(first.turn_id, client=ScriptedClient(say("Hi.")), clock=Clock())
        created = Message.objects.get(id=first.message_id).created_at
        Message.objects.bulk_create([
            Message(client_id=uuid.uuid4(), thread_id=first.thread_id, seq=10 + i,
                    role="user" if i % 2 == 0 else "assistant",
                    content=f"Message {i} about a trip to Zurich and what to pack.", created_at=created)
            for i in range(size)
        ])
        Thread.objects.filter(id=first.thread_id).update(
            next_seq=10 + size, history_bytes=history_bytes(load_history(first.thread_id)))
        return first.thread_id

    return make


def submit(owner, thread_id):
    submitted = chat_submit(owner.member, message="Search my notes for Zurich", conversation_id=thread_id)
    Turn.objects.filter(id=submitted.turn_id).update(model_option=PRICED_OPTION)
    return submitted.turn_id


@pytest.mark.parametrize("size", [0, 200])
def test_a_submission_runs_a_pinned_number_of_queries_whatever_the_length(owner, conversation, size,
                                                                          django_assert_num_queries):
    thread_id = conversation(size)
    member = resolve_member(owner.user, None)  # as the request's guard does, before the view runs
    with django_assert_num_queries(SUBMISSION):
        chat_submit(member, message="Next question", conversation_id=thread_id)
    assert SUBMISSION <= 12  # issue 11's target


def test_the_whole_chat_request_adds_only_the_token_and_the_guard(owner, conversation,
                                                                  django_assert_num_queries):
    """POST /api/chat with an API token: the token (with its person), the
    guard's membership (with the organization: the terms), then the submission.
    (A token's first use in a minute writes its last use: one UPDATE more, once.)"""
    thread_id = conversation(0)
    token_just_used(owner)
    with django_assert_num_queries(1 + 1 + SUBMISSION):
        response = owner.client.post("/api/chat", {"message": "Next question", "conversationId": str(thread_id)},
                                     format="json")
    assert response.status_code == 202, response.content


def test_an_organizations_model_choice_is_checked_with_one_query_more(owner, conversation,
                                                                     django_assert_num_queries):
    thread_id = conversation(0)
    Organization.objects.filter(pk=owner.organization.pk).update(model_option="offline")
    member = resolve_member(owner.user, None)
    with django_assert_num_queries(SUBMISSION + CHOICE_CHECK):
        submitted = chat_submit(member, message="Next question", conversation_id=thread_id)
    assert Turn.objects.get(id=submitted.turn_id).model_option == "offline"


def test_a_conversations_own_model_costs_no_query_when_the_deployment_serves_it(owner, conversation,
                                                                               django_assert_num_queries):
    """Issue 25: the conversation's model is checked at submission and by the
    worker; an option usable on the deployment's own settings needs no query
    (only one that needs the organization's own key reads its keys)."""
    thread_id = conversation(0)
    Thread.objects.filter(id=thread_id).update(model_option="offline")
    member = resolve_member(owner.user, None)
    with django_assert_num_queries(SUBMISSION):
        submitted = chat_submit(member, message="Next question", conversation_id=thread_id)
    assert Turn.objects.get(id=submitted.turn_id).model_option == "offline"
    with django_assert_num_queries(TURN_BASE):
        run_turn(submitted.turn_id, client=ScriptedClient(say("Hi.")), clock=Clock())


def test_a_member_without_the_guards_terms_reads_them(owner, conversation, django_assert_num_queries):
    thread_id = conversation(0)
    assert owner.member.terms is None  # the fixture's Member is made by hand
    with django_assert_num_queries(SUBMISSION + TERMS_READ):
        chat_submit(owner.member, message="Next question", conversation_id=thread_id)


def test_the_guard_reads_the_membership_and_its_terms_in_one_query(owner, django_assert_num_queries):
    with django_assert_num_queries(1):
        member = resolve_member(owner.user, None)
    assert member.terms == MemberTerms(model_choice="", own_cap_credits=None, default_cap_credits=None)


@pytest.mark.parametrize("size", [0, 200])
@pytest.mark.parametrize("steps", [1, 2, 3])
def test_each_step_runs_a_pinned_number_of_queries_whatever_the_length(owner, conversation, size, steps,
                                                                       django_assert_num_queries):
    turn_id = submit(owner, conversation(size))
    script = [call(("search_notes", {"query": "Zurich"}))] * (steps - 1) + [say("Here.")]
    with django_assert_num_queries(TURN_BASE + TOOL_STEP * (steps - 1)):
        run_turn(turn_id, client=ScriptedClient(*script), clock=Clock())
    assert Turn.objects.get(id=turn_id).steps == steps


def test_a_history_with_tool_calls_and_files_reads_them_once_each(owner, conversation, notes,
                                                                  django_assert_num_queries):
    """Issue 36.2: a conversation of text alone reads its history in one
    query; one whose messages ran tools and carry files reads those too."""
    thread_id = conversation(0)
    run_turn(submit(owner, thread_id), client=ScriptedClient(call(("search_notes", {"query": "Zurich"})),
                                                             say("Found.")), clock=Clock())
    first = Message.objects.filter(thread_id=thread_id, role="user").order_by("seq").first()
    Attachment.objects.create(organization_id=owner.organization.pk, user=owner.user, message=first,
                              name="plan.txt", media_type="text/plain", size=4, data=b"plan", text="plan",
                              model_bytes=4, created_at=first.created_at)
    turn_id = submit(owner, thread_id)
    client = ScriptedClient(say("Here."))
    with django_assert_num_queries(TURN_BASE + HISTORY_CALLS_AND_FILES):
        run_turn(turn_id, client=client, clock=Clock())
    sent = client.requests[-1].history
    assert [part.name for item in sent for part in getattr(item, "files", ())] == ["plan.txt"]
    assert [use.name for item in sent for use in getattr(item, "tool_uses", ())] == ["search_notes"]


def test_a_step_that_must_hold_more_credits_runs_a_pinned_number_more(owner, conversation, settings,
                                                                   django_assert_num_queries):
    settings.CREDITS_RESERVATION = 0  # the start holds nothing: the first call's bound is held before it
    turn_id = submit(owner, conversation(0))
    with django_assert_num_queries(TURN_BASE + HOLD):
        run_turn(turn_id, client=ScriptedClient(say("Here.")), clock=Clock())
    assert Turn.objects.get(id=turn_id).status == "done"


def test_the_loop_keeps_the_history_the_database_would_give(owner, conversation, notes):
    """Read once, appended to by each step: the last request holds exactly
    what reading the stored conversation again gives (its last reply apart)."""
    thread_id = conversation(4)
    client = ScriptedClient(call(("search_notes", {"query": "Zurich"}), text="Looking."),
                            call(("read_note", {"note_id": notes["zurich"].id}), ("read_inbox", {})),
                            say("Here."))
    run_turn(submit(owner, thread_id), client=client, clock=Clock())

    assert client.requests[-1].history == load_history(thread_id)[:-1]
    assert Thread.objects.get(id=thread_id).history_bytes == history_bytes(load_history(thread_id))
    last_seq = Message.objects.filter(thread_id=thread_id).order_by("-seq").values_list("seq", flat=True).first()
    assert Thread.objects.get(id=thread_id).next_seq == last_seq + 1

"""Staff moderate conversations: list and search threads, read one with its
messages, delete it, except while a reply is being written into it."""

import uuid
from datetime import timedelta

import pytest
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils import timezone

from assistant.models import ActionCard
from conversations.models import Message, Thread, ToolCall
from tests.admin.conftest import logged_in, make_staff, queries_of
from tests.admin.test_personal_data import thread_with_a_card
from tests.conversations.factories import make_thread

pytestmark = pytest.mark.django_db

THREADS = reverse("admin:conversations_thread_changelist")


def make_message(thread, seq: int, *, calls: int) -> Message:
    message = Message.objects.create(thread=thread, seq=seq, role="assistant", content=f"message {seq}",
                                     created_at=thread.created_at)
    for position in range(calls):
        ToolCall.objects.create(message=message, position=position, tool_use_id=f"toolu_{seq}_{position}",
                                name="search_notes", input={"q": seq}, result={"n": position},
                                created_at=thread.created_at)
    return message


def page(thread) -> str:
    return reverse("admin:conversations_thread_change", args=[thread.pk])


def delete_page(thread) -> str:
    return reverse("admin:conversations_thread_delete", args=[thread.pk])


@pytest.fixture
def moderator(db):
    return logged_in(make_staff("mo", "conversations.view_thread", "conversations.delete_thread"))


def test_the_list_shows_each_thread_with_its_message_count(root_client, owner, outsider):
    busy = make_thread(owner, title="Trip to Zurich", messages=3)
    make_thread(outsider, title="Quarterly numbers", messages=1, status=Thread.Status.RESPONDING)

    response = root_client.get(THREADS)

    assert response.status_code == 200
    rows = {row.pk: row for row in response.context["cl"].result_list}
    shown = admin.site._registry[Thread].message_count
    assert {row.title: shown(row) for row in rows.values()} == {"Trip to Zurich": 3, "Quarterly numbers": 1}
    assert str(busy.pk) in response.content.decode() and "olivia" in response.content.decode()


@pytest.mark.parametrize(
    "query, expected",
    [
        ({"status__exact": "responding"}, {"Quarterly numbers"}),
        ({"organization__id__exact": "acme"}, {"Trip to Zurich"}),
        ({"q": "zurich"}, {"Trip to Zurich"}),
        ({"q": "otto"}, {"Quarterly numbers"}),
        ({"q": "id"}, {"Trip to Zurich"}),
        ({"q": str(uuid.uuid4())}, set()),
    ],
    ids=["status", "organization", "title", "username", "id", "unknown-id"],
)
def test_staff_filter_and_search_threads(root_client, owner, outsider, query, expected):
    zurich = make_thread(owner, title="Trip to Zurich", messages=1)
    make_thread(outsider, title="Quarterly numbers", status=Thread.Status.RESPONDING)
    if query.get("organization__id__exact") == "acme":
        query = {"organization__id__exact": owner.organization.pk}
    if query.get("q") == "id":
        query = {"q": f"  {zurich.pk}  "}

    response = root_client.get(THREADS, query)

    assert response.status_code == 200
    assert {row.title for row in response.context["cl"].result_list} == expected


def test_the_list_runs_as_many_queries_for_twenty_threads_as_for_one(root_client, owner, outsider,
                                                                     django_assert_num_queries):
    make_thread(owner, title="first", messages=2, calls=1)
    root_client.get(THREADS)
    one = queries_of(lambda: root_client.get(THREADS))
    for number in range(19):
        make_thread(owner if number % 2 else outsider, title=f"thread {number}", messages=2, calls=1)

    with django_assert_num_queries(one):
        response = root_client.get(THREADS)

    assert response.context["cl"].result_count == 20


def test_a_thread_page_shows_its_messages_in_order_with_their_tool_calls(moderator, owner):
    thread = make_thread(owner, title="Trip", messages=3, calls=2)
    Message.objects.filter(thread=thread, seq=1).update(notice="Stopped: the model provider failed.")
    ToolCall.objects.filter(message__thread=thread, message__seq=2).delete()

    response = moderator.get(page(thread))

    assert response.status_code == 200
    messages, cards = response.context["inline_admin_formsets"]
    shown = [(form.form.instance.seq, [call.tool_use_id for call in form.form.instance.tool_calls.all()])
             for form in messages]
    assert shown == [(0, ["toolu_0_0", "toolu_0_1"]), (1, ["toolu_1_0", "toolu_1_1"]), (2, [])]
    assert len(cards.formset.forms) == 0
    body = response.content.decode()
    assert body.index("message 0") < body.index("message 1") < body.index("message 2")
    assert body.index('data-tool-call="toolu_0_1"') < body.index('data-tool-call="toolu_1_0"')
    assert "Stopped: the model provider failed." in body
    assert 'name="_save"' not in body and "deletelink" in body


def test_a_message_is_shown_rendered_as_the_person_saw_it_and_nothing_in_it_runs(moderator, owner):
    """Issue 34.6: moderation read raw Markdown; now the pages' rendering, with their sanitizer."""
    thread = make_thread(owner, title="Trip", messages=1)
    Message.objects.filter(thread=thread).update(content="**Bold** and `code`\n\n<script>alert(1)</script>")
    body = moderator.get(page(thread)).content.decode()
    assert "<strong>Bold</strong>" in body and "<code>code</code>" in body and "**Bold**" not in body
    assert "<script>alert(1)" not in body


def test_a_tool_call_shows_its_name_input_folded_raw_result_and_error_flag(moderator, owner):
    thread = make_thread(owner, title="Trip", messages=1)
    message = thread.messages.get()
    ToolCall.objects.create(message=message, position=0, tool_use_id="toolu_ok", name="search_notes",
                            input={"query": "Zürich"}, result={"notes": ["<b>bold</b>"]}, created_at=message.created_at)
    ToolCall.objects.create(message=message, position=1, tool_use_id="toolu_bad", name="read_inbox",
                            input={"folder": "x"}, result={"error": "no such folder"}, is_error=True,
                            created_at=message.created_at)

    body = moderator.get(page(thread)).content.decode()

    ok = body[body.index('data-tool-call="toolu_ok"'):body.index('data-tool-call="toolu_bad"')]
    bad = body[body.index('data-tool-call="toolu_bad"'):]
    assert "<strong>search_notes</strong>" in ok and "&quot;query&quot;: &quot;Zürich&quot;" in ok
    assert "<details" in ok and "&lt;b&gt;bold&lt;/b&gt;" in ok and "<b>bold</b>" not in body
    assert "data-tool-call-error" not in ok
    assert "<strong>read_inbox</strong>" in bad and "data-tool-call-error" in bad and "no such folder" in bad


def test_a_thread_page_shows_its_cards_with_their_outcome(moderator, owner):
    thread = thread_with_a_card(owner, "Mail")
    ActionCard.objects.filter(thread=thread).update(status=ActionCard.Status.FAILED, error="The mail server refused.")

    response = moderator.get(page(thread))

    _, cards = response.context["inline_admin_formsets"]
    assert [form.form.instance.status for form in cards] == [ActionCard.Status.FAILED]
    body = response.content.decode()
    assert "Send Mail" in body and "The mail server refused." in body


# The page's queries, whatever the number of messages, tool calls and cards:
# session, user, the thread, its messages, all their tool calls, its cards,
# the access-log row, the thread's organization and person (shown as fields).
THREAD_PAGE_QUERIES = 9


@pytest.mark.parametrize("messages", [1, 30])
def test_a_thread_page_runs_a_fixed_number_of_queries(root_client, owner, messages, django_assert_num_queries):
    thread = make_thread(owner, messages=1, calls=2)
    ActionCard.objects.create(
        organization=owner.organization, user=owner.user, thread=thread, tool_name="send_email",
        description="Send it", snapshot_hash="0" * 64, expires_at=timezone.now() + timedelta(hours=1),
    )
    for seq in range(1, messages):
        make_message(thread, seq, calls=3)
    root_client.get(page(make_thread(owner, messages=1)))  # warm caches (content types) before counting

    with django_assert_num_queries(THREAD_PAGE_QUERIES):
        response = root_client.get(page(thread))

    assert response.status_code == 200
    messages_shown, cards_shown = response.context["inline_admin_formsets"]
    assert len(messages_shown.formset.forms) == messages and len(cards_shown.formset.forms) == 1
    assert response.content.decode().count("data-tool-call=") == 2 + 3 * (messages - 1)


def test_threads_and_their_messages_are_not_added_or_changed_here(root_client, owner):
    thread = make_thread(owner, title="Trip", messages=1)

    assert root_client.get(reverse("admin:conversations_thread_add")).status_code == 403
    root_client.post(page(thread), {"title": "Renamed"})

    thread.refresh_from_db()
    assert thread.title == "Trip" and thread.messages.get().content == "message 0"


def test_a_moderator_deletes_an_idle_thread_with_its_messages_and_cards(moderator, owner):
    thread = thread_with_a_card(owner, "Spam")
    kept = make_thread(owner, title="Kept", messages=1)

    from_filtered_list = "?_changelist_filters=status__exact%3Didle"
    confirm = moderator.get(delete_page(thread) + from_filtered_list)
    response = moderator.post(delete_page(thread) + from_filtered_list, {"post": "yes"})

    assert confirm.status_code == 200 and "Are you sure" in confirm.content.decode()
    assert response.status_code == 302 and response["Location"] == THREADS + "?status__exact=idle"
    assert list(Thread.objects.all()) == [kept]
    assert not Message.objects.filter(thread_id=thread.pk).exists()
    assert not owner.user.action_cards.exists()


def test_a_thread_being_answered_cannot_be_deleted(moderator, owner):
    thread = make_thread(owner, title="Busy", messages=2, status=Thread.Status.RESPONDING)

    shown = moderator.get(page(thread))
    confirm = moderator.get(delete_page(thread))
    response = moderator.post(delete_page(thread), {"post": "yes"})

    assert shown.status_code == 200 and "deletelink" not in shown.content.decode()
    assert (confirm.status_code, response.status_code) == (403, 403)
    assert Thread.objects.get().messages.count() == 2


def test_a_turn_starting_after_the_page_was_checked_still_stops_the_delete(owner, root, rf):
    thread = make_thread(owner, title="Raced", messages=1)
    model_admin = admin.site.get_model_admin(Thread)
    checked = model_admin.get_queryset(rf.get("/")).get(pk=thread.pk)  # idle when the page was checked
    Thread.objects.filter(pk=thread.pk).update(status=Thread.Status.RESPONDING)  # a turn started since
    request = rf.post("/")
    request.user = root

    with pytest.raises(PermissionDenied):
        model_admin.delete_model(request, checked)

    assert Thread.objects.filter(pk=thread.pk).exists()


def test_staff_without_the_delete_permission_cannot_delete(owner):
    reader = logged_in(make_staff("reader", "conversations.view_thread"))
    thread = make_thread(owner, title="Trip", messages=1)

    assert reader.get(page(thread)).status_code == 200
    assert reader.post(delete_page(thread), {"post": "yes"}).status_code == 403
    assert Thread.objects.filter(pk=thread.pk).exists()


def test_threads_are_deleted_one_at_a_time(root_client, owner):
    thread = make_thread(owner, title="Busy", status=Thread.Status.RESPONDING)

    response = root_client.post(THREADS, {"action": "delete_selected", "_selected_action": [thread.pk],
                                          "post": "yes"})

    assert "delete_selected" not in root_client.get(THREADS).content.decode()
    assert response.status_code in (200, 302) and Thread.objects.filter(pk=thread.pk).exists()


def test_people_who_are_not_staff_see_no_conversation(owner):
    thread = make_thread(owner, title="Trip")
    client = logged_in(owner.user)

    response = client.get(page(thread))

    assert response.status_code == 302 and "/login/" in response["Location"]


def test_a_summarized_thread_page_shows_its_summaries_and_the_page_is_recorded(moderator, owner):
    from assistant_engine.organizations.models import StaffAccess
    from conversations.models import Summary

    thread = make_thread(owner, title="Long", messages=4, calls=0)
    Summary.objects.create(thread=thread, through_seq=2, content="They planned the Thursday review.",
                           read_untrusted=True, input_tokens=900, output_tokens=40, created_at=timezone.now())
    Thread.objects.filter(id=thread.id).update(summary_seq=2)
    response = moderator.get(page(thread))
    body = response.content.decode()
    assert "They planned the Thursday review." in body and "Summaries of earlier messages" in body
    assert StaffAccess.objects.filter(kind="conversation", object_id=str(thread.id)).exists()

"""Staff moderate conversations: list and search threads, read one with its
messages, delete it, except while a reply is being written into it."""

import uuid

import pytest
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from conversations.models import Message, Thread, ToolCall
from tests.admin.conftest import logged_in, make_staff, queries_of
from tests.admin.test_personal_data import thread_with_a_card
from tests.conversations.factories import make_thread

pytestmark = pytest.mark.django_db

THREADS = reverse("admin:conversations_thread_changelist")


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
    assert {row.title: row.message_count for row in rows.values()} == {"Trip to Zurich": 3, "Quarterly numbers": 1}
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
    [messages] = response.context["inline_admin_formsets"]
    shown = [(form.form.instance.seq, form.form.instance.tool_call_count) for form in messages]
    assert shown == [(0, 2), (1, 2), (2, 0)]
    body = response.content.decode()
    assert body.index("message 0") < body.index("message 1") < body.index("message 2")
    assert "Stopped: the model provider failed." in body
    assert 'name="_save"' not in body and "deletelink" in body


def test_a_thread_page_runs_as_many_queries_for_twenty_messages_as_for_two(root_client, owner,
                                                                            django_assert_num_queries):
    short, long = make_thread(owner, messages=2, calls=2), make_thread(owner, messages=20, calls=2)
    root_client.get(page(short))
    two = queries_of(lambda: root_client.get(page(short)))

    with django_assert_num_queries(two):
        assert root_client.get(page(long)).status_code == 200


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

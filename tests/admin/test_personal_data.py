"""A person's data in the admin: downloading it takes its own permission;
erasing someone takes the right to delete users, and staff are erased by a
superuser only. The export's queries don't grow with the conversations."""

import json
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils import timezone

from assistant.admin import export_personal_data
from assistant.models import ActionCard, Erasure
from assistant_engine.organizations.personal_data import export_user
from conversations.models import ToolCall
from tests.admin.conftest import logged_in, make_staff, queries_of
from tests.conversations.factories import make_thread

pytestmark = pytest.mark.django_db

User = get_user_model()
USERS = reverse("admin:auth_user_changelist")
ERASE = reverse("admin:assistant_erasure_add")


def export_action(client, *users):
    return client.post(USERS, {"action": "export_personal_data", "_selected_action": [u.pk for u in users]})


def thread_with_a_card(person, title: str):
    """A conversation with a tool call in each of its two messages and a card on one of them."""
    thread = make_thread(person, title=title, messages=2, calls=1)
    call = ToolCall.objects.filter(message__thread=thread).order_by("message__seq", "position").first()
    ActionCard.objects.create(
        organization=person.organization, user=person.user, thread=thread, tool_call=call, tool_name="send_email",
        tool_input={"to": "t@example.com"}, description=f"Send {title}", snapshot_hash="0" * 64,
        expires_at=timezone.now() + timedelta(hours=1),
    )
    return thread


# --- Export -------------------------------------------------------------------------


@pytest.mark.parametrize("perms", [["auth.view_user"], ["auth.view_user", "auth.change_user", "auth.delete_user"]],
                         ids=["view-only", "every-user-permission"])
def test_staff_without_the_export_permission_get_no_export(owner, perms):
    thread_with_a_card(owner, "secret plans")
    clerk = logged_in(make_staff("clerk", *perms))

    changelist = clerk.get(USERS)
    response = export_action(clerk, owner.user)

    assert changelist.status_code == 200
    assert "export_personal_data" not in changelist.content.decode()  # not offered
    assert response.status_code in (200, 302)  # the list again (302: "No action selected")
    assert "Content-Disposition" not in response and response["Content-Type"].startswith("text/html")
    assert "secret plans" not in response.content.decode()


def test_the_export_action_refuses_a_caller_without_the_permission(owner, rf):
    request = rf.post(USERS)
    request.user = make_staff("clerk", "auth.view_user")

    with pytest.raises(PermissionDenied):
        export_personal_data(None, request, User.objects.filter(pk=owner.user.pk))


def test_staff_with_the_export_permission_download_the_export(owner, colleague):
    thread_with_a_card(owner, "olivia's plans")
    officer = logged_in(make_staff("officer", "auth.view_user", "assistant.export_personal_data"))

    assert "export_personal_data" in officer.get(USERS).content.decode()
    response = export_action(officer, owner.user)

    assert response.status_code == 200 and response["Content-Disposition"].startswith("attachment;")
    [person] = json.loads(response.content)["people"]
    [export] = person["organizations"]
    assert person["userId"] == owner.user.pk and export["conversations"][0]["title"] == "olivia's plans"
    assert "colin" not in response.content.decode()


def test_a_superuser_has_the_export_permission_implicitly(root_client, owner):
    response = export_action(root_client, owner.user)

    assert response.status_code == 200 and response["Content-Disposition"].startswith("attachment;")


def test_the_export_runs_as_many_queries_for_ten_conversations_as_for_one(owner, django_assert_num_queries):
    thread_with_a_card(owner, "first")
    export_user(owner.member)  # warm caches (content types and the like) before counting
    one = queries_of(lambda: export_user(owner.member))
    for number in range(9):
        thread_with_a_card(owner, f"more {number}")

    with django_assert_num_queries(one):
        document = export_user(owner.member)

    assert len(document["conversations"]) == 10
    assert all(len(conversation["cards"]) == 1 for conversation in document["conversations"])
    assert {c["cards"][0]["conversationId"] for c in document["conversations"]} == {
        c["id"] for c in document["conversations"]
    }
    assert {c["cards"][0]["toolCallId"] for c in document["conversations"]} == {"toolu_0_0"}


def test_the_api_shows_a_conversations_cards_as_the_export_does(owner):
    thread = thread_with_a_card(owner, "both ways")

    detail = owner.client.get(f"/api/conversations/{thread.id}").json()
    [exported] = export_user(owner.member)["conversations"]

    assert detail["cards"] == exported["cards"] and len(detail["cards"]) == 1


# --- Erasure ------------------------------------------------------------------------


def erase(client, user):
    return client.post(ERASE, {"user": user.pk, "confirm": "on"})


def assert_nothing_erased(*users):
    assert not Erasure.objects.exists()
    assert all(User.objects.get(pk=user.pk).is_active for user in users)


def test_staff_who_may_add_erasures_but_not_delete_users_erase_nobody(owner, root):
    clerk = logged_in(make_staff("clerk", "assistant.add_erasure", "assistant.view_erasure"))

    assert clerk.get(ERASE).status_code == 403
    assert erase(clerk, owner.user).status_code == 403
    assert erase(clerk, root).status_code == 403
    assert_nothing_erased(owner.user, root)


@pytest.fixture
def eraser(db):
    return make_staff("eraser", "assistant.add_erasure", "assistant.view_erasure", "auth.delete_user")


def test_staff_who_may_delete_users_erase_a_person(eraser, owner):
    response = erase(logged_in(eraser), owner.user)

    assert response.status_code == 302
    erasure = Erasure.objects.get()
    assert (erasure.subject_id, erasure.requested_by) == (owner.user.pk, eraser)
    assert not User.objects.get(pk=owner.user.pk).is_active


@pytest.mark.parametrize(
    "target, error",
    [
        ("superuser", "Only a superuser can erase a staff member or a superuser."),
        ("staff", "Only a superuser can erase a staff member or a superuser."),
        ("self", "You can't erase your own account."),
    ],
)
def test_staff_cannot_erase_a_superuser_another_staff_member_or_themselves(eraser, root, target, error):
    person = {"superuser": root, "staff": make_staff("steve"), "self": eraser}[target]

    response = erase(logged_in(eraser), person)

    assert response.status_code == 200
    assert response.context["adminform"].form.errors == {"user": [error]}
    assert_nothing_erased(person)


def test_a_superuser_erases_a_staff_member_but_not_themselves(root_client, root):
    steve = make_staff("steve")

    refused = erase(root_client, root)
    assert refused.status_code == 200 and refused.context["adminform"].form.errors == {
        "user": ["You can't erase your own account."]
    }
    assert_nothing_erased(root)

    assert erase(root_client, steve).status_code == 302
    assert Erasure.objects.get().subject_id == steve.pk

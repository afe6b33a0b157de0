"""The admin's account pages (auth.User: name, e-mail, last sign-in) leave a
staff access row for each organization of the person, and the person is told
on each organization's data page (issue 22's leftover: they logged nothing)."""

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.urls import reverse

from assistant_engine.organizations.admin import AccountAdmin, RecordsStaffAccess
from assistant_engine.organizations.models import Membership, StaffAccess
from tests.admin.conftest import logged_in, make_staff

User = get_user_model()


def test_the_account_admin_is_ours():
    assert isinstance(admin.site._registry[User], AccountAdmin)
    assert isinstance(admin.site._registry[User], RecordsStaffAccess)


def rows():
    return sorted(StaffAccess.objects.values_list("staff_username", "person_id", "organization_id", "kind",
                                                  "object_id"), key=str)


@pytest.mark.django_db
@pytest.mark.parametrize("view", ["change", "history", "delete"])
def test_opening_an_account_records_one_row_per_organization_of_the_person(owner, outsider, view):
    Membership.objects.create(user=owner.user, organization=outsider.organization)
    staff = make_staff("mo", "auth.view_user", "auth.change_user", "auth.delete_user")
    path = reverse(f"admin:auth_user_{view}", args=[owner.user.pk])

    assert logged_in(staff).get(path).status_code == 200

    assert rows() == sorted([("mo", owner.user.pk, owner.organization.pk, "account", str(owner.user.pk)),
                             ("mo", owner.user.pk, outsider.organization.pk, "account", str(owner.user.pk))],
                            key=str)


@pytest.mark.django_db
def test_the_password_page_of_an_account_is_recorded(owner):
    staff = make_staff("mo", "auth.view_user", "auth.change_user")
    path = reverse("admin:auth_user_password_change", args=[owner.user.pk])
    assert logged_in(staff).get(path).status_code == 200
    assert rows() == [("mo", owner.user.pk, owner.organization.pk, "account", str(owner.user.pk))]


@pytest.mark.django_db
def test_an_account_without_membership_is_recorded_without_organization(db):
    loner = User.objects.create_user("loner", password="x")
    staff = make_staff("mo", "auth.view_user")
    assert logged_in(staff).get(reverse("admin:auth_user_change", args=[loner.pk])).status_code == 200
    assert rows() == [("mo", loner.pk, None, "account", str(loner.pk))]


@pytest.mark.django_db
def test_the_account_list_records_each_person_shown_once_per_organization(owner, colleague):
    staff = make_staff("mo", "auth.view_user")
    assert logged_in(staff).get(reverse("admin:auth_user_changelist")).status_code == 200
    listed = {(person, organization) for _, person, organization, kind, object_id in rows()
              if kind == "account" and object_id == ""}
    assert {(owner.user.pk, owner.organization.pk), (colleague.user.pk, colleague.organization.pk),
            (staff.pk, None)} == listed


@pytest.mark.django_db
def test_a_refused_account_page_records_nothing(owner):
    stranger = logged_in(make_staff("stranger"))
    for view in ("change", "history", "delete"):
        assert stranger.get(reverse(f"admin:auth_user_{view}", args=[owner.user.pk])).status_code in (302, 403)
    assert not StaffAccess.objects.exists()


@pytest.mark.django_db
def test_the_person_is_told_on_the_data_page(owner):
    staff = make_staff("mo", "auth.view_user")
    logged_in(staff).get(reverse("admin:auth_user_change", args=[owner.user.pk]))
    page = logged_in(owner.user).get("/data/")
    assert page.status_code == 200
    assert "a staff member opened your account" in page.content.decode()
    assert "mo" not in page.content.decode().split("staff member opened your account")[0][-200:]


@pytest.mark.django_db(transaction=True)  # the foreign keys are checked at commit: a real one
def test_the_bulk_delete_of_an_account_leaves_its_trace_and_no_500(owner, colleague, root):
    """The list's "Delete selected" wrote the trace after deleting the account:
    rows naming a deleted user, an IntegrityError, a 500 (the reviewer's finding),
    the account gone and no trace. Written first, the deletion blanks the person
    on them (SET_NULL), as an erasure does; the staff member's trace stays."""
    client = logged_in(root)  # deleting an account deletes the person's objects too: every permission
    changelist = reverse("admin:auth_user_changelist")
    chosen = {"action": "delete_selected", "_selected_action": [colleague.user.pk]}

    assert client.post(changelist, chosen).status_code == 200
    assert client.post(changelist, {**chosen, "post": "yes"}).status_code == 302

    assert not User.objects.filter(pk=colleague.user.pk).exists()
    assert rows() == [("root", None, colleague.organization.pk, "account", "")] * 2

"""Every admin page that shows a person's data leaves a row in the staff access
log (issue 22.4: a note, an inbox message or a sent e-mail opened in the admin
left none)."""

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.urls import reverse

from assistant_engine.organizations.admin import RecordsStaffAccess
from assistant_engine.organizations.models import StaffAccess
from tests.admin.conftest import logged_in, make_staff
from workspace.models import InboxMessage, Note, SentEmail

User = get_user_model()


def owner_fields(model) -> list[str]:
    """The model's foreign keys to a person: what makes a row someone's."""
    return [field.name for field in model._meta.get_fields()
            if field.many_to_one and field.concrete and field.related_model is User]


def test_every_admin_over_a_persons_model_records_the_staff_access():
    """A model with a foreign key to a person is that person's data, unless the
    model says why not (`staff_access_exempt`); its admin then records each view."""
    persons_models = {model: model_admin for model, model_admin in admin.site._registry.items()
                      if owner_fields(model) and not getattr(model, "staff_access_exempt", "")}
    assert {Note, InboxMessage, SentEmail} <= set(persons_models)
    silent = [model._meta.label for model, model_admin in persons_models.items()
              if not isinstance(model_admin, RecordsStaffAccess) or not getattr(model_admin, "staff_access_kind", "")]
    assert silent == []
    kinds = [model_admin.staff_access_kind for model_admin in persons_models.values()]
    assert len(set(kinds)) == len(kinds) and set(kinds) <= set(StaffAccess.Kind.values)


@pytest.fixture
def workspace_objects(owner):
    common = {"organization": owner.organization}
    return {
        "note": Note.objects.create(**common, owner=owner.user, title="Diagnosis", body="Private."),
        "inbox_message": InboxMessage.objects.create(**common, recipient=owner.user, sender="doc@example.com",
                                                     subject="Results", body="Private."),
        "sent_email": SentEmail.objects.create(**common, sender=owner.user, from_address="olivia@example.com",
                                               to="doc@example.com", subject="Thanks", body="Private."),
    }


def page(obj, view: str) -> str:
    return reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_{view}", args=[obj.pk])


@pytest.mark.django_db
@pytest.mark.parametrize("kind", ["note", "inbox_message", "sent_email"])
@pytest.mark.parametrize("view", ["change", "history", "delete"])
def test_opening_a_persons_workspace_object_records_one_row(owner, workspace_objects, kind, view):
    obj = workspace_objects[kind]
    label = obj._meta.model_name
    staff = make_staff("mo", f"workspace.view_{label}", f"workspace.delete_{label}")
    client = logged_in(staff)

    assert client.get(page(obj, view)).status_code == 200

    assert list(StaffAccess.objects.values_list("staff_username", "person_id", "organization_id", "kind",
                                                "object_id", "path")) == [
        ("mo", owner.user.pk, owner.organization.pk, kind, str(obj.pk), page(obj, view))]


@pytest.mark.django_db
def test_a_refused_page_records_nothing(owner, workspace_objects):
    stranger = logged_in(make_staff("stranger"))
    for obj in workspace_objects.values():
        for view in ("change", "history", "delete"):
            assert stranger.get(page(obj, view)).status_code in (302, 403)
    assert not StaffAccess.objects.exists()


@pytest.mark.django_db
def test_a_list_page_records_each_person_it_shows_and_they_are_told(owner, colleague, workspace_objects):
    """A list shows titles and names: one row per person shown, without an object id."""
    from tests.web.conftest import web_client

    Note.objects.create(organization=colleague.organization, owner=colleague.user, title="Other", body="x")
    client = logged_in(make_staff("mo", "workspace.view_note"))
    assert client.get(reverse("admin:workspace_note_changelist")).status_code == 200
    assert sorted(StaffAccess.objects.values_list("person_id", "kind", "object_id")) == sorted([
        (owner.user.pk, "note", ""), (colleague.user.pk, "note", "")])
    data_page = web_client(owner).get("/data/").content.decode()
    assert "a staff member saw a list that showed some of your data" in data_page


@pytest.mark.django_db
@pytest.mark.parametrize("kind", ["note", "inbox_message", "sent_email"])
def test_the_bulk_delete_action_records_each_person_whose_objects_it_shows_and_deletes(
        owner, colleague, workspace_objects, kind):
    """The list's "Delete selected" action shows the chosen objects (their
    titles) on its confirmation page, then deletes them: a person's data
    seen and destroyed by staff, so it leaves a row per person, as the
    object's own delete page does."""
    obj = workspace_objects[kind]
    label = obj._meta.model_name
    staff = make_staff("mo", f"workspace.view_{label}", f"workspace.delete_{label}")
    client = logged_in(staff)
    changelist = reverse(f"admin:{obj._meta.app_label}_{label}_changelist")
    chosen = {"action": "delete_selected", "_selected_action": [obj.pk]}

    shown = client.post(changelist, chosen)
    assert shown.status_code == 200 and "Are you sure" in shown.content.decode()
    deleted = client.post(changelist, {**chosen, "post": "yes"})
    assert deleted.status_code == 302 and not type(obj).objects.filter(pk=obj.pk).exists()

    people = list(StaffAccess.objects.values_list("staff_username", "person_id", "organization_id", "kind"))
    assert people == [("mo", owner.user.pk, owner.organization.pk, kind)] * 2


@pytest.mark.django_db
def test_the_ledger_records_each_person_whose_turns_it_shows_and_not_a_grants_staff(owner, colleague, root):
    """A turn's reservation names the person who started it (its actor): the
    ledger, listed or searched by their name, shows their turns, when and
    what they cost, as the turns' admin does. A grant's actor is staff: no row."""
    import uuid

    from credits.models import LedgerEntry
    from credits.services import credits_grant, credits_reserve
    from tests.web.conftest import web_client

    credits_reserve(owner.member, turn_id=uuid.uuid4())
    credits_grant(organization=owner.organization, credits=5, staff_user=root, reason="Pilot")
    client = logged_in(make_staff("mo", "credits.view_ledgerentry"))
    listing = reverse("admin:credits_ledgerentry_changelist")

    assert client.get(listing, {"q": owner.user.username}).status_code == 200
    assert list(StaffAccess.objects.values_list("person_id", "kind", "object_id")) == [
        (owner.user.pk, "ledger_entry", "")]
    reserve = LedgerEntry.objects.get(kind="reserve")
    grant = LedgerEntry.objects.get(kind="grant")
    for entry in (reserve, grant):
        assert client.get(reverse("admin:credits_ledgerentry_change", args=[entry.pk])).status_code == 200
    assert list(StaffAccess.objects.filter(object_id__gt="").values_list("person_id", "object_id")) == [
        (owner.user.pk, str(reserve.pk))]
    assert "a staff member looked at what one of your replies cost" in web_client(owner).get("/data/").content.decode()

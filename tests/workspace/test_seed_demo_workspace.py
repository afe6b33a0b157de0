import pytest
from django.contrib import admin
from django.core.management import CommandError, call_command

from workspace.models import InboxMessage, Note, SentEmail


def test_seeding_gives_the_person_notes_and_messages_once(owner, colleague):
    call_command("seed_demo_workspace", "acme", "olivia")
    call_command("seed_demo_workspace", "acme", "olivia")

    notes = Note.objects.filter(owner=owner.user, organization=owner.organization)
    messages = InboxMessage.objects.filter(recipient=owner.user, organization=owner.organization)
    assert notes.count() == 3 and messages.count() == 3
    assert Note.objects.count() == 3 and InboxMessage.objects.count() == 3


def test_seeding_keeps_what_the_person_changed(owner):
    call_command("seed_demo_workspace", "acme", "olivia")
    Note.objects.filter(title="Quarterly planning").update(body="My own text")

    call_command("seed_demo_workspace", "acme", "olivia")

    assert Note.objects.get(title="Quarterly planning").body == "My own text"


@pytest.mark.parametrize(("slug", "username"), [("acme", "otto"), ("nowhere", "olivia"), ("acme", "nobody")])
def test_seeding_someone_who_is_not_a_member_fails(owner, outsider, slug, username):
    with pytest.raises(CommandError, match="is not a member"):
        call_command("seed_demo_workspace", slug, username)

    assert not Note.objects.exists()


@pytest.mark.parametrize("model", [Note, InboxMessage, SentEmail])
def test_staff_see_workspace_data_in_admin(admin_client, model):
    assert model in admin.site._registry
    url = f"/admin/workspace/{model._meta.model_name}/"

    assert admin_client.get(url).status_code == 200

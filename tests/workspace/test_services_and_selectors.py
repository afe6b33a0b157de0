"""Workspace services and selectors: each person sees and changes only their own data."""

from smtplib import SMTPException
from unittest import mock

import pytest
from django.core import mail
from django.test import override_settings

from tests.workspace.conftest import message_to, note_of
from workspace import selectors, services
from workspace.models import InboxMessage, Note, SentEmail


def test_note_get_returns_the_owners_note(owner, owner_note):
    assert selectors.note_get(owner.member, owner_note.id) == owner_note


@pytest.mark.parametrize("person", ["colleague", "outsider"])
def test_note_get_of_someone_elses_note_is_not_found(request, person, owner_note):
    member = request.getfixturevalue(person).member

    with pytest.raises(Note.DoesNotExist, match=f"No note with id {owner_note.id}."):
        selectors.note_get(member, owner_note.id)


@pytest.mark.parametrize("note_id", [999_999, -1, 0])
def test_note_get_of_a_missing_note_is_the_same_not_found(owner, note_id):
    with pytest.raises(Note.DoesNotExist, match=f"No note with id {note_id}."):
        selectors.note_get(owner.member, note_id)


def test_a_member_of_two_organizations_sees_each_organizations_notes_apart(owner, outsider):
    from assistant_engine.organizations.members import Member
    from assistant_engine.organizations.models import Membership

    Membership.objects.create(organization=outsider.organization, user=owner.user)
    in_acme = note_of(owner, title="Acme note")
    in_globex = Note.objects.create(organization=outsider.organization, owner=owner.user, title="Globex note")
    globex_member = Member(outsider.organization.id, owner.user.id, "member", outsider.organization.slug)

    assert [note.title for note in selectors.note_search(owner.member, "")] == ["Acme note"]
    assert [note.title for note in selectors.note_search(globex_member, "")] == ["Globex note"]
    with pytest.raises(Note.DoesNotExist):
        selectors.note_get(globex_member, in_acme.id)
    assert selectors.note_get(globex_member, in_globex.id) == in_globex


def test_note_search_matches_title_or_body_in_any_case(owner, everyones_notes):
    by_body = note_of(owner, title="Other", body="the BUDGET again")
    note_of(owner, title="Unrelated", body="nothing here")

    found = selectors.note_search(owner.member, "budget")

    assert {note.id for note in found} == {everyones_notes["owner"].id, by_body.id}
    assert [note.id for note in selectors.note_search(owner.member, "plan")] == [everyones_notes["owner"].id]


def test_note_search_with_an_empty_query_lists_the_latest_own_notes(owner, everyones_notes):
    newer = note_of(owner, title="Newer")

    assert [note.id for note in selectors.note_search(owner.member, "  ")] == [
        newer.id,
        everyones_notes["owner"].id,
    ]


def test_note_search_is_bounded(owner):
    for index in range(25):
        note_of(owner, title=f"Note {index}")

    assert len(selectors.note_search(owner.member, "note")) == selectors.NOTE_SEARCH_LIMIT


def test_note_create_belongs_to_the_member(owner):
    note = services.note_create(owner.member, title="New", body="Text")

    assert (note.organization_id, note.owner_id) == (owner.organization.id, owner.user.id)


def test_note_delete_removes_the_owners_note(owner, owner_note):
    services.note_delete(owner.member, note_id=owner_note.id)

    assert not Note.objects.filter(id=owner_note.id).exists()


@pytest.mark.parametrize("person", ["colleague", "outsider"])
def test_note_delete_of_someone_elses_note_is_not_found_and_keeps_it(request, person, owner_note):
    member = request.getfixturevalue(person).member

    with pytest.raises(Note.DoesNotExist):
        services.note_delete(member, note_id=owner_note.id)

    assert Note.objects.filter(id=owner_note.id).exists()


def test_note_delete_twice_is_not_found_the_second_time(owner, owner_note):
    services.note_delete(owner.member, note_id=owner_note.id)

    with pytest.raises(Note.DoesNotExist):
        services.note_delete(owner.member, note_id=owner_note.id)


def test_inbox_list_shows_only_the_members_messages_newest_first(owner, colleague, outsider):
    older = message_to(owner, subject="Older")
    newer = message_to(owner, subject="Newer")
    InboxMessage.objects.filter(id=older.id).update(received_at=newer.received_at.replace(year=2020))
    message_to(colleague, subject="For the colleague")
    message_to(outsider, subject="For the outsider")

    assert [message.subject for message in selectors.inbox_list(owner.member)] == ["Newer", "Older"]


@pytest.mark.parametrize(("asked", "given"), [(1, 1), (3, 3), (0, 1), (-5, 1), (500, 50)])
def test_inbox_list_limit_is_clamped(owner, asked, given):
    for index in range(60):
        message_to(owner, subject=f"Message {index}")

    assert len(selectors.inbox_list(owner.member, asked)) == given


def test_email_send_goes_through_the_email_backend_and_is_recorded(owner):
    sent = services.email_send(owner.member, to="anna@example.com", subject="Hello", body="Hi Anna")

    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert (message.to, message.subject, message.body) == (["anna@example.com"], "Hello", "Hi Anna")
    assert message.from_email == "assistant@localhost"
    record = SentEmail.objects.get(id=sent.id)
    assert (record.organization_id, record.sender_id, record.to) == (
        owner.organization.id,
        owner.user.id,
        message.to[0],
    )
    assert record.from_address == "assistant@localhost"


def test_email_goes_out_from_the_persons_address_when_they_have_one(owner):
    owner.user.email = "olivia@acme.example"
    owner.user.save(update_fields=["email"])

    services.email_send(owner.member, to="anna@example.com", subject="Hello", body="Hi")

    assert mail.outbox[0].from_email == "olivia@acme.example"


@override_settings(DEFAULT_FROM_EMAIL="noreply@acme.example")
def test_the_products_address_comes_from_settings(owner):
    assert selectors.sender_address(owner.member) == "noreply@acme.example"


def test_a_failed_send_records_nothing(owner):
    with mock.patch("workspace.services.send_mail", side_effect=SMTPException("relay refused")):
        with pytest.raises(SMTPException):
            services.email_send(owner.member, to="anna@example.com", subject="Hello", body="Hi")

    assert not SentEmail.objects.exists()

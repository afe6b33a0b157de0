"""Workspace data for the fixed cast: each person has a note and an inbox message."""

import pytest

from workspace.models import InboxMessage, Note


def note_of(person, title="Plan", body="Budget review on the 12th."):
    return Note.objects.create(organization=person.organization, owner=person.user, title=title, body=body)


def message_to(person, sender="marie@example.com", subject="Lunch?", body="Thursday at 12:30?"):
    return InboxMessage.objects.create(
        organization=person.organization, recipient=person.user, sender=sender, subject=subject, body=body
    )


@pytest.fixture
def owner_note(owner):
    return note_of(owner)


@pytest.fixture
def colleague_note(colleague):
    return note_of(colleague, title="Colleague plan", body="Colleague budget.")


@pytest.fixture
def outsider_note(outsider):
    return note_of(outsider, title="Outsider plan", body="Outsider budget.")


@pytest.fixture
def everyones_notes(owner_note, colleague_note, outsider_note):
    return {"owner": owner_note, "colleague": colleague_note, "outsider": outsider_note}

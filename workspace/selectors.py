"""Reads of the workspace, always scoped to the verified member.

A note of another person or organization is answered exactly like a note that
does not exist (Note.DoesNotExist), so nothing leaks about other people's data.
"""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet

from assistant_engine.organizations.members import Member
from workspace.models import InboxMessage, Note, SentEmail

NOTE_SEARCH_LIMIT = 20
INBOX_MAX_LIMIT = 50


def notes_of(member: Member) -> QuerySet[Note]:
    """The one door to notes: the member's own, in the member's organization."""
    return Note.objects.filter(organization_id=member.organization_id, owner_id=member.user_id)


def note_get(member: Member, note_id: int) -> Note:
    try:
        return notes_of(member).get(id=note_id)
    except (Note.DoesNotExist, ValueError, TypeError):
        raise Note.DoesNotExist(f"No note with id {note_id}.") from None


def note_search(member: Member, query: str, *, limit: int = NOTE_SEARCH_LIMIT) -> list[Note]:
    """Notes whose title or body contains `query` (any case), most recently updated first.

    An empty query lists the most recent notes.
    """
    notes = notes_of(member)
    query = query.strip()
    if query:
        notes = notes.filter(Q(title__icontains=query) | Q(body__icontains=query))
    return list(notes.order_by("-updated_at", "-id")[:limit])


def inbox_list(member: Member, limit: int = 10) -> list[InboxMessage]:
    """The member's most recently received messages."""
    limit = max(1, min(limit, INBOX_MAX_LIMIT))
    messages = InboxMessage.objects.filter(
        organization_id=member.organization_id, recipient_id=member.user_id
    )
    return list(messages.order_by("-received_at", "-id")[:limit])


def sent_list(member: Member, limit: int = 50) -> list[SentEmail]:
    """The mail the member sent, newest first."""
    sent = SentEmail.objects.filter(organization_id=member.organization_id, sender_id=member.user_id)
    return list(sent.order_by("-sent_at", "-id")[:limit])


def sender_address(member: Member) -> str:
    """The address an email of this person goes out from: theirs, else the product's."""
    email = get_user_model().objects.filter(id=member.user_id).values_list("email", flat=True).first()
    return email or settings.DEFAULT_FROM_EMAIL

"""The workspace's part of a person's export and erasure (organizations.personal_data):
their notes, the e-mails they sent, the messages they received."""

from collections.abc import Iterator

from assistant_engine.organizations.members import Member
from assistant_engine.organizations.personal_data import delete_in_order, iso
from workspace.models import InboxMessage, Note, SentEmail

# Iterators read in chunks: the streamed export holds a chunk of each section at a time.
CHUNK = 500


def export_notes(member: Member) -> Iterator[dict]:
    notes = Note.objects.filter(organization_id=member.organization_id, owner_id=member.user_id).order_by("id")
    return (
        {"id": note.id, "title": note.title, "body": note.body, "createdAt": iso(note.created_at),
         "updatedAt": iso(note.updated_at)}
        for note in notes.iterator(chunk_size=CHUNK)
    )


def export_sent_emails(member: Member) -> Iterator[dict]:
    emails = SentEmail.objects.filter(organization_id=member.organization_id, sender_id=member.user_id).order_by("id")
    return (
        {"id": email.id, "from": email.from_address, "to": email.to, "subject": email.subject, "body": email.body,
         "sentAt": iso(email.sent_at)}
        for email in emails.iterator(chunk_size=CHUNK)
    )


def export_inbox(member: Member) -> Iterator[dict]:
    messages = InboxMessage.objects.filter(
        organization_id=member.organization_id, recipient_id=member.user_id
    ).order_by("id")
    return (
        {"id": message.id, "sender": message.sender, "subject": message.subject, "body": message.body,
         "receivedAt": iso(message.received_at)}
        for message in messages.iterator(chunk_size=CHUNK)
    )


def erase_workspace(user, batch_size: int) -> int:
    """Up to `batch_size` of the person's notes, sent e-mails and received messages."""
    return delete_in_order((
        Note.objects.filter(owner=user),
        SentEmail.objects.filter(sender=user),
        InboxMessage.objects.filter(recipient=user),
    ), batch_size)


def register() -> None:
    from assistant_engine.organizations.personal_data import register_eraser, register_exporter

    register_exporter("notes", export_notes)
    register_exporter("sentEmails", export_sent_emails)
    register_exporter("inbox", export_inbox)
    register_eraser("workspace", erase_workspace, order=30)

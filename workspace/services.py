"""Writes of the workspace, always as the verified member."""

from django.core.mail import send_mail
from django.db import transaction

from assistant_engine.organizations.members import Member
from workspace.models import Note, SentEmail
from workspace.selectors import notes_of, sender_address


def note_create(member: Member, *, title: str, body: str, written_from_untrusted: bool = False) -> Note:
    return Note.objects.create(
        organization_id=member.organization_id, owner_id=member.user_id, title=title, body=body,
        written_from_untrusted=written_from_untrusted,
    )


@transaction.atomic
def note_delete(member: Member, *, note_id: int) -> None:
    """Delete one of the member's notes; Note.DoesNotExist if it is not theirs (or gone).

    One conditional DELETE: two concurrent confirmations cannot both report a deletion.
    """
    deleted, _ = notes_of(member).filter(id=note_id).delete()
    if not deleted:
        raise Note.DoesNotExist(f"No note with id {note_id}.")


def email_send(member: Member, *, to: str, subject: str, body: str) -> SentEmail:
    """Send through Django's email backend, then keep a record.

    The send happens outside any transaction (slow I/O); the record is written
    only once the backend accepted the mail, so it never claims a mail that
    was not sent.
    """
    from_address = sender_address(member)
    send_mail(subject, body, from_address, [to], fail_silently=False)
    return SentEmail.objects.create(
        organization_id=member.organization_id,
        sender_id=member.user_id,
        from_address=from_address,
        to=to,
        subject=subject,
        body=body,
    )


def note_update(member: Member, *, note_id: int, title: str, body: str) -> Note:
    """Edit one of the member's notes by hand; Note.DoesNotExist if it is not theirs (or gone).

    The untrusted mark stays: editing may keep what third-party content put there.
    """
    note = notes_of(member).get(id=note_id)
    note.title, note.body = title, body
    note.save(update_fields=["title", "body", "updated_at"])
    return note

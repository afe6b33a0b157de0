"""Files attached to messages: upload, read, claim by a message, purge.

Each takes the verified Member first: another person's file is *not found*
(FileNotFound), never a different error.
"""

import uuid
from datetime import datetime, timedelta
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import Case, QuerySet, Sum, Value, When
from django.utils import timezone

from assistant_engine.organizations.members import Member
from assistant_engine.organizations.models import Organization
from conversations import pdf_reading, sniff
from conversations.models import Attachment, Message

# What one image (or one PDF page, which Anthropic reads as an image too) may
# cost at most, in the history bound's unit (one token per byte): providers
# scale images down (Claude: ≤ 1.15 megapixels, about 1,600 tokens).
IMAGE_MODEL_BYTES = 5_000
NAME_MAX_CHARS = 255


class FileNotFound(Exception):
    pass


class FileRefused(Exception):
    """The upload is not a file the assistant takes; `code` says why (400)."""

    def __init__(self, code: str, detail: str):
        super().__init__(detail)
        self.code, self.detail = code, detail


class FileTooLarge(Exception):
    """Over FILE_MAX_BYTES (413)."""


class StorageFull(Exception):
    """A storage bound reached: `code` says which; `status` 429 while it is
    files not sent yet (they are sent or purged within a day), 413 for all of
    the organization's files."""

    def __init__(self, code: str, status: int, detail: str):
        super().__init__(detail)
        self.code, self.status, self.detail = code, status, detail


class FileNotReady(Exception):
    """A PDF still being read (409)."""


class FileAlreadyAttached(Exception):
    """A file goes with one message only (409)."""


class FileNotOfMessage(Exception):
    """An edit keeps only files of the message it replaces (400)."""


def files_of(member: Member) -> QuerySet[Attachment]:
    """The one tenant filter for files."""
    return Attachment.objects.filter(organization_id=member.organization_id, user_id=member.user_id)


def file_json(attachment: Attachment) -> dict:
    body = {"id": str(attachment.id), "name": attachment.name, "type": attachment.media_type,
            "size": attachment.size, "attached": attachment.message_id is not None, "state": attachment.state}
    if attachment.state == Attachment.State.REFUSED:
        body["code"], body["detail"] = refusal_of(attachment)
    return body


def refusal_of(attachment: Attachment) -> tuple[str, str]:
    return pdf_reading.REFUSALS.get(attachment.refusal, pdf_reading.REFUSALS["unreadable_pdf"])


def file_get_for_member(member: Member, file_id: UUID, *, with_data: bool = False) -> Attachment:
    queryset = files_of(member) if with_data else files_of(member).defer("data", "text")
    attachment = queryset.filter(id=file_id).first()
    if attachment is None:
        raise FileNotFound
    return attachment


def file_upload(member: Member, *, name: str, data: bytes, now: datetime | None = None) -> Attachment:
    """Check, then store. Raises FileTooLarge, FileRefused or StorageFull
    (nothing stored). A PDF is stored `reading`: its text is read by a
    worker (read_file_task), never here, in a web request."""
    if len(data) > settings.FILE_MAX_BYTES:
        raise FileTooLarge
    if not data:
        raise FileRefused("empty_file", "The file is empty.")
    media_type = sniff.sniff(data)
    if media_type is None:
        raise FileRefused("unsupported_file_type",
                          "Only text (UTF-8), Markdown, CSV, PDF, PNG, JPEG, GIF and WebP files can be attached.")
    now = now or timezone.now()
    size, text, state = len(data), "", Attachment.State.READY
    if media_type == sniff.TEXT:
        text, data = sniff.text_of(data) or "", b""  # stored once, as its text (Attachment.content)
    elif media_type == sniff.PDF:
        state = Attachment.State.READING
    with transaction.atomic():
        check_storage(member, size)
        if state == Attachment.State.READING:
            check_reading(member, now)
        return Attachment.objects.create(
            organization_id=member.organization_id, user_id=member.user_id, name=clean_name(name),
            media_type=media_type, size=size, data=data, text=text, state=state,
            model_bytes=model_bytes(media_type, text, 0), created_at=now,
        )


def check_storage(member: Member, size: int) -> None:
    """Raises StorageFull when `size` more bytes would pass a bound. The
    organization's row is locked (in the caller's transaction): two uploads
    at once can't both fit in the last room."""
    Organization.objects.select_for_update().only("id").get(id=member.organization_id)
    organization_files = Attachment.objects.filter(organization_id=member.organization_id)
    unattached = organization_files.filter(message__isnull=True)
    if stored_bytes(unattached.filter(user_id=member.user_id)) + size > settings.FILE_UNATTACHED_MAX_BYTES:
        raise StorageFull("unattached_files_limit", 429, "Your files waiting to be sent are too large together: "
                          "send or remove some first.")
    if stored_bytes(unattached) + size > settings.FILE_ORGANIZATION_UNATTACHED_MAX_BYTES:
        raise StorageFull("unattached_files_limit", 429, "Your organization's files waiting to be sent are too "
                          "large together: try again later.")
    if stored_bytes(organization_files) + size > settings.FILE_ORGANIZATION_MAX_BYTES:
        raise StorageFull("organization_files_full", 413, "Your organization stores as many files as it may: "
                          "delete conversations with files to make room.")


# A PDF left `reading` longer than this (its task lost) no longer counts as being read.
READING_STALE = timedelta(minutes=10)


def check_reading(member: Member, now: datetime) -> None:
    """Raises StorageFull (429) when the person, or their organization, has as
    many PDFs being read as it may: each costs a worker up to FILE_PDF_CPU_SECONDS."""
    reading = Attachment.objects.filter(organization_id=member.organization_id, state=Attachment.State.READING,
                                        created_at__gt=now - READING_STALE)
    if reading.filter(user_id=member.user_id).count() >= settings.FILE_PDF_READING_PER_PERSON:
        raise StorageFull("files_still_reading", 429, "Your PDFs are still being read: attach this one in a moment.")
    if reading.count() >= settings.FILE_PDF_READING_PER_ORGANIZATION:
        raise StorageFull("files_still_reading", 429, "Your organization's PDFs are still being read: "
                          "attach this one in a moment.")


def stored_bytes(files: QuerySet[Attachment]) -> int:
    return files.aggregate(total=Sum("size"))["total"] or 0


def file_read(file_id: UUID) -> None:
    """Read a `reading` PDF's text (in the worker): `ready` with its text and
    pages, or `refused` with why. Harmless when run twice."""
    attachment = Attachment.objects.filter(id=file_id, state=Attachment.State.READING).only("data").first()
    if attachment is None:
        return
    try:
        text, pages = pdf_reading.read_pdf(bytes(attachment.data))
    except pdf_reading.PdfRefused as refusal:
        changes = {"state": Attachment.State.REFUSED, "refusal": refusal.reason}
    else:
        changes = {"state": Attachment.State.READY, "text": text, "pages": pages,
                   "model_bytes": model_bytes(sniff.PDF, text, pages)}
    Attachment.objects.filter(id=file_id, state=Attachment.State.READING).update(**changes)


def model_bytes(media_type: str, text: str, pages: int) -> int:
    """An upper bound of what the file costs a model, in the history's unit:
    its text (a text file's, or a PDF's extracted text, which the
    OpenAI-compatible door sends) plus each image a provider may read."""
    images = 1 if media_type in sniff.IMAGES else pages
    return len(text.encode()) + images * IMAGE_MODEL_BYTES


def clean_name(name: str) -> str:
    """The name shown: its last path part, without control characters, bounded."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    base = "".join(char for char in base if char.isprintable()).strip()
    return (base or "file")[:NAME_MAX_CHARS]


def files_claim(member: Member, file_ids: list[UUID], message: Message) -> list[Attachment]:
    """Attach the person's unattached files to `message` (in the caller's
    transaction), in the order of `file_ids` (the person's, whatever order
    their uploads finished in). Raises FileNotFound for an id that is not
    theirs, FileAlreadyAttached for one that goes with another message,
    FileNotReady for a PDF still being read and FileRefused for one that
    could not be."""
    if not file_ids:
        return []
    # Locked: the same file sent with two messages at once goes with one only.
    found = {a.id: a for a in files_of(member).select_for_update().defer("data", "text").filter(id__in=file_ids)}
    if len(found) != len(set(file_ids)):
        raise FileNotFound
    attachments = [found[file_id] for file_id in file_ids]
    if any(attachment.message_id is not None for attachment in attachments):
        raise FileAlreadyAttached
    for attachment in attachments:
        if attachment.state == Attachment.State.READING:
            raise FileNotReady
        if attachment.state == Attachment.State.REFUSED:
            raise FileRefused(*refusal_of(attachment))
    positions = Case(*(When(id=attachment.id, then=Value(place)) for place, attachment in enumerate(attachments)))
    Attachment.objects.filter(id__in=found).update(message=message, position=positions)
    return attachments


def files_copy(member: Member, *, source: Message, message: Message,
               keep: list[UUID] | None = None) -> list[Attachment]:
    """The person's files of `source` attached to `message` as well, copied (in
    the caller's transaction): an edited message keeps its files, and the
    previous version still shows the ones it was sent with. `keep`: only these
    of them (None: all). Raises FileNotFound for an id that is not the
    person's, FileNotOfMessage for one of theirs that `source` does not have
    (before anything is copied)."""
    fields = [field.attname for field in Attachment._meta.concrete_fields if field.name not in ("id", "message")]
    originals = files_of(member).filter(message=source)
    if keep is not None:
        _check_kept(member, source, keep)
        originals = originals.filter(id__in=keep)
    originals = originals.order_by("position", "created_at", "id").values(*fields)
    return Attachment.objects.bulk_create(
        [Attachment(**original, id=uuid.uuid4(), message=message) for original in originals])


def _check_kept(member: Member, source: Message, keep: list[UUID]) -> None:
    messages = dict(files_of(member).filter(id__in=keep).values_list("id", "message_id"))
    if len(messages) != len(set(keep)):
        raise FileNotFound
    if any(message_id != source.id for message_id in messages.values()):
        raise FileNotOfMessage


def files_model_bytes(member: Member, file_ids: list[UUID]) -> int:
    return sum(files_of(member).filter(id__in=file_ids).values_list("model_bytes", flat=True))


def purge_unattached_files(now: datetime | None = None) -> int:
    """Uploads no message claimed within FILE_UNATTACHED_HOURS."""
    cutoff = (now or timezone.now()) - timedelta(hours=settings.FILE_UNATTACHED_HOURS)
    return Attachment.objects.filter(message__isnull=True, created_at__lt=cutoff).delete()[0]

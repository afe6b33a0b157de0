"""Files attached to messages: upload, read, claim by a message, purge.

Each takes the verified Member first: another person's file is *not found*
(FileNotFound), never a different error.
"""

import io
import logging
import uuid
from datetime import datetime, timedelta
from uuid import UUID

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from assistant_engine.organizations.members import Member
from conversations import sniff
from conversations.models import Attachment, Message

logger = logging.getLogger("conversations.files")

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


class FileAlreadyAttached(Exception):
    """A file goes with one message only (409)."""


class FileNotOfMessage(Exception):
    """An edit keeps only files of the message it replaces (400)."""


def files_of(member: Member) -> QuerySet[Attachment]:
    """The one tenant filter for files."""
    return Attachment.objects.filter(organization_id=member.organization_id, user_id=member.user_id)


def file_json(attachment: Attachment) -> dict:
    return {"id": str(attachment.id), "name": attachment.name, "type": attachment.media_type,
            "size": attachment.size, "attached": attachment.message_id is not None}


def file_get_for_member(member: Member, file_id: UUID, *, with_data: bool = False) -> Attachment:
    queryset = files_of(member) if with_data else files_of(member).defer("data", "text")
    attachment = queryset.filter(id=file_id).first()
    if attachment is None:
        raise FileNotFound
    return attachment


def file_upload(member: Member, *, name: str, data: bytes, now: datetime | None = None) -> Attachment:
    """Check, then store. Raises FileTooLarge or FileRefused (nothing stored)."""
    if len(data) > settings.FILE_MAX_BYTES:
        raise FileTooLarge
    if not data:
        raise FileRefused("empty_file", "The file is empty.")
    media_type = sniff.sniff(data)
    if media_type is None:
        raise FileRefused("unsupported_file_type",
                          "Only text (UTF-8), Markdown, CSV, PDF, PNG, JPEG, GIF and WebP files can be attached.")
    text, pages = "", 0
    if media_type == sniff.TEXT:
        text = sniff.text_of(data) or ""
    elif media_type == sniff.PDF:
        text, pages = pdf_text(data)
    return Attachment.objects.create(
        organization_id=member.organization_id, user_id=member.user_id, name=clean_name(name),
        media_type=media_type, size=len(data), data=data, text=text, pages=pages,
        model_bytes=model_bytes(media_type, text, pages), created_at=now or timezone.now(),
    )


def model_bytes(media_type: str, text: str, pages: int) -> int:
    """An upper bound of what the file costs a model, in the history's unit:
    its text (a text file's, or a PDF's extracted text, which the
    OpenAI-compatible door sends) plus each image a provider may read."""
    images = 1 if media_type in sniff.IMAGES else pages
    return len(text.encode()) + images * IMAGE_MODEL_BYTES


def pdf_text(data: bytes) -> tuple[str, int]:
    """The text of a PDF and its number of pages (pypdf: pure Python, kept up).
    Raises FileRefused for a PDF it can't read, an encrypted one, or one of
    more than FILE_PDF_MAX_PAGES pages."""
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise FileRefused("unreadable_pdf", "This PDF is encrypted: attach a copy without a password.")
        pages = len(reader.pages)
        if pages > settings.FILE_PDF_MAX_PAGES:
            raise FileRefused("too_many_pages", f"A PDF may have at most {settings.FILE_PDF_MAX_PAGES} pages.")
        text = "\n\n".join(page.extract_text() or "" for page in reader.pages)
    except FileRefused:
        raise
    except Exception as error:  # pypdf raises many kinds on a malformed file: all mean "can't read it"
        logger.info("pdf_unreadable", extra={"error_type": type(error).__name__})
        raise FileRefused("unreadable_pdf", "This PDF can't be read.") from None
    return text.replace("\x00", ""), pages


def clean_name(name: str) -> str:
    """The name shown: its last path part, without control characters, bounded."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    base = "".join(char for char in base if char.isprintable()).strip()
    return (base or "file")[:NAME_MAX_CHARS]


def files_claim(member: Member, file_ids: list[UUID], message: Message) -> list[Attachment]:
    """Attach the person's unattached files to `message` (in the caller's
    transaction). Raises FileNotFound for an id that is not theirs, and
    FileAlreadyAttached for one that goes with another message."""
    if not file_ids:
        return []
    # Locked: the same file sent with two messages at once goes with one only.
    found = {a.id: a for a in files_of(member).select_for_update().defer("data", "text").filter(id__in=file_ids)}
    if len(found) != len(set(file_ids)):
        raise FileNotFound
    if any(attachment.message_id is not None for attachment in found.values()):
        raise FileAlreadyAttached
    Attachment.objects.filter(id__in=found).update(message=message)
    return [found[file_id] for file_id in file_ids]


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
    originals = originals.order_by("created_at", "id").values(*fields)
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

"""A conversation's own settings, written by its person: its title and its
model option (PATCH /api/conversations/{id})."""

from datetime import datetime
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from assistant_engine.organizations.members import Member
from conversations.extensions import model_allowed
from conversations.models import Thread
from conversations.selectors import thread_get_for_member
from conversations.titles import collapse_whitespace
from conversations.versions import version_after

RENAME_MAX_CHARS = 200  # Thread.title's column


class ModelNotAllowed(ValueError):
    """The organization does not allow this model option (conversations.extensions.model_allowed)."""


def thread_update(member: Member, *, thread_id: UUID, title: str | None = None, model: str | None = None,
                  now: datetime | None = None) -> Thread:
    """The person's own title (whitespace collapsed; the caller checked it is
    not blank) and the conversation's model option ("": the organization's).
    A new title moves `updated_at`, so an offline client's older copy does not
    put the old title back (last write wins); a model does not (no client
    document holds it). ModelNotAllowed before anything is written."""
    now = now or timezone.now()
    with transaction.atomic():
        # Lock the row: a concurrent upsert can't interleave its read-compare-write with this one.
        thread = thread_get_for_member(member, thread_id, for_update=True)
        if model is not None and not model_allowed(member, model):  # after: another's thread is not found
            raise ModelNotAllowed(model)
        fields = []
        if title is not None:
            thread.title = collapse_whitespace(title)[:RENAME_MAX_CHARS]
            thread.updated_at = version_after(thread.updated_at, now)
            fields += ["title", "updated_at"]
        if model is not None:
            thread.model_option = model
            fields.append("model_option")
        if fields:
            thread.save(update_fields=fields)
    return thread

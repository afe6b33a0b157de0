"""Reads of conversations. Each takes the verified Member first; a thread of
another person or organization does not exist for them."""

from uuid import UUID

from django.db import connection
from django.db.models import BooleanField, Prefetch, Q, QuerySet
from django.db.models.expressions import RawSQL

from conversations.models import Attachment, Message, Thread, ToolCall
from organizations.members import Member


class ConversationNotFound(Exception):
    pass


def threads_of(member: Member) -> QuerySet[Thread]:
    """The one tenant filter for threads."""
    return Thread.objects.filter(organization_id=member.organization_id, user_id=member.user_id)


def thread_list(member: Member) -> QuerySet[Thread]:
    return threads_of(member).order_by("-updated_at", "-id")


SEARCH_MAX_CHARS = 200


def thread_search(member: Member, query: str) -> QuerySet[Thread]:
    """The person's conversations whose title or any message holds the words
    of `query`, most recent first. PostgreSQL: full-text search with the
    `simple` configuration (no stemming: the people write in several
    languages), on the GIN index of migration 0005; SQLite: a plain
    case-insensitive match."""
    if connection.vendor == "postgresql":
        in_title, in_content = _full_text("title", query), _full_text("content", query)
    else:
        in_title, in_content = Q(title__icontains=query), Q(content__icontains=query)
    # Only the person's messages: a common word must cost their data, not every
    # tenant's (the planner picks the GIN index or the person's threads).
    messages = Message.objects.filter(thread__organization_id=member.organization_id,
                                      thread__user_id=member.user_id).filter(in_content)
    return thread_list(member).filter(in_title | Q(id__in=messages.values("thread_id")))


def _full_text(column: str, query: str) -> RawSQL:
    # Written as the index's very expression (to_tsvector('simple', content)),
    # so PostgreSQL can use the index; Django's SearchVector adds a COALESCE.
    return RawSQL(f"to_tsvector('simple', {column}) @@ plainto_tsquery('simple', %s)", (query,),  # noqa: S611
                  output_field=BooleanField())


def thread_get_for_member(member: Member, thread_id: UUID, *, for_update: bool = False) -> Thread:
    queryset = threads_of(member)
    if for_update:
        queryset = queryset.select_for_update()
    thread = queryset.filter(id=thread_id).first()
    if thread is None:
        raise ConversationNotFound
    return thread


def messages_prefetch(*, file_data: bool = False) -> Prefetch:
    """A thread's messages in order, with their tool calls and files (without
    their bytes unless `file_data`): three queries whatever their number."""
    files = Attachment.objects.order_by("created_at", "id")
    return Prefetch(
        "messages",
        queryset=Message.objects.order_by("seq").prefetch_related(
            Prefetch("tool_calls", queryset=ToolCall.objects.order_by("position")),
            Prefetch("attachments", queryset=files if file_data else files.defer("data", "text")),
        ),
    )


def thread_with_messages(member: Member, thread_id: UUID) -> Thread:
    """The thread with its messages, tool calls and files: four queries whatever their number."""
    thread = threads_of(member).prefetch_related(messages_prefetch()).filter(id=thread_id).first()
    if thread is None:
        raise ConversationNotFound
    return thread

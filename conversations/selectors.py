"""Reads of conversations. Each takes the verified Member first; a thread of
another person or organization does not exist for them."""

from uuid import UUID

from django.db import connection
from django.db.models import BooleanField, Exists, OuterRef, Prefetch, Q, QuerySet
from django.db.models.expressions import RawSQL

from assistant_engine.organizations.members import Member
from conversations.models import API_ID_PREFIX, Attachment, Message, Summary, Thread, ToolCall


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
    languages); SQLite: a plain case-insensitive match."""
    # Per conversation of the person, most recent first, until the page is
    # full: each probe reads the GIN index (thread_id, tsvector) of migration
    # 0010 at that one conversation, so the cost is the person's own data
    # whatever the other tenants hold, and a common word stops at the first
    # conversations instead of computing to_tsvector on all their messages.
    if connection.vendor == "postgresql":
        return thread_list(member).filter(_full_text("title", query) | _has_message_matching(query))
    messages = Message.objects.filter(thread_id=OuterRef("id"), content__icontains=query).order_by()
    return thread_list(member).filter(Q(title__icontains=query) | Q(Exists(messages)))


def _has_message_matching(query: str) -> RawSQL:
    # OFFSET 0 keeps the EXISTS a probe per conversation: without it,
    # PostgreSQL may turn it into a hashed subplan that first finds the word
    # in every tenant's messages (its whole posting list) when it guesses the
    # word is rare.
    message, thread = Message._meta.db_table, Thread._meta.db_table
    return RawSQL(  # noqa: S611 (the word is a parameter; the names are the models' tables)
        f"EXISTS (SELECT 1 FROM {message} m WHERE m.thread_id = {thread}.id "  # noqa: S608
        "AND to_tsvector('simple', m.content) @@ plainto_tsquery('simple', %s) OFFSET 0)",
        (query,), output_field=BooleanField())


def _full_text(column: str, query: str) -> RawSQL:
    # Written as the index's very expression (to_tsvector('simple', content)),
    # so PostgreSQL can use the index; Django's SearchVector adds a COALESCE.
    return RawSQL(f"to_tsvector('simple', {column}) @@ plainto_tsquery('simple', %s)", (query,),  # noqa: S611
                  output_field=BooleanField())


def thread_get_for_member(member: Member, thread_id: UUID, *, for_update: bool = False) -> Thread:
    queryset = thread_by_api_id(member, thread_id)
    if for_update:
        queryset = queryset.select_for_update()
    thread = queryset.first()
    if thread is None:
        raise ConversationNotFound
    return thread


def thread_by_api_id(member: Member, thread_id: UUID) -> QuerySet[Thread]:
    """The person's conversation /api/ names `thread_id` (Thread.api_id): its
    own id, or the UUID the person uploaded it under. Another person's ids are
    never searched: they can be neither found nor taken."""
    return threads_of(member).filter(Q(id=thread_id) | Q(external_id=f"{API_ID_PREFIX}{thread_id}"))


def thread_by_client_id(member: Member, client_id: str) -> QuerySet[Thread]:
    """The person's conversation an /ai/ client calls `client_id`: one it
    uploaded under that id, or (a canonical UUID) one started elsewhere and
    listed on /ai/ under its primary key. Only the person's own are searched,
    so another person's ids can neither be found nor taken."""
    mine = Q(external_id=client_id)
    as_uuid = canonical_uuid(client_id)
    if as_uuid is not None:
        mine |= Q(external_id="", id=as_uuid)
    return threads_of(member).filter(mine)


def canonical_uuid(value: str) -> UUID | None:
    """The UUID a string spells in its canonical lower-case form, else None."""
    try:
        parsed = UUID(value)
    except ValueError:
        return None
    return parsed if str(parsed) == value else None


def messages_prefetch(*, file_data: bool = False) -> Prefetch:
    """A thread's messages in order, with their tool calls and files (without
    their bytes unless `file_data`): three queries whatever their number."""
    files = Attachment.objects.order_by("position", "created_at", "id")
    return Prefetch(
        "messages",
        # Each message with its feedback (a 👍/👎 on a reply) in the same query.
        queryset=Message.objects.order_by("seq").select_related("feedback").prefetch_related(
            Prefetch("tool_calls", queryset=ToolCall.objects.order_by("position")),
            Prefetch("attachments", queryset=files if file_data else files.defer("data", "text")),
        ),
    )


def thread_with_messages(member: Member, thread_id: UUID) -> Thread:
    """The thread with its messages, tool calls and files: four queries whatever their number."""
    thread = thread_by_api_id(member, thread_id).prefetch_related(messages_prefetch()).first()
    if thread is None:
        raise ConversationNotFound
    return thread


def summary_of(thread: Thread) -> Summary | None:
    """The summary the model is sent instead of the thread's older messages
    (the newest; no query when the thread has none)."""
    if not thread.summary_seq:
        return None
    return thread.summaries.order_by("-through_seq").first()

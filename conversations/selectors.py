"""Reads of conversations. Each takes the verified Member first; a thread of
another person or organization does not exist for them."""

from uuid import UUID

from django.db.models import Prefetch, QuerySet

from conversations.models import Message, Thread, ToolCall
from organizations.members import Member


class ConversationNotFound(Exception):
    pass


def threads_of(member: Member) -> QuerySet[Thread]:
    """The one tenant filter for threads."""
    return Thread.objects.filter(organization_id=member.organization_id, user_id=member.user_id)


def thread_list(member: Member) -> QuerySet[Thread]:
    return threads_of(member).order_by("-updated_at", "-id")


def thread_get_for_member(member: Member, thread_id: UUID, *, for_update: bool = False) -> Thread:
    queryset = threads_of(member)
    if for_update:
        queryset = queryset.select_for_update()
    thread = queryset.filter(id=thread_id).first()
    if thread is None:
        raise ConversationNotFound
    return thread


def thread_with_messages(member: Member, thread_id: UUID) -> Thread:
    """The thread with its messages and tool calls: three queries whatever their number."""
    thread = (
        threads_of(member)
        .prefetch_related(
            Prefetch(
                "messages",
                queryset=Message.objects.order_by("seq").prefetch_related(
                    Prefetch("tool_calls", queryset=ToolCall.objects.order_by("position"))
                ),
            )
        )
        .filter(id=thread_id)
        .first()
    )
    if thread is None:
        raise ConversationNotFound
    return thread

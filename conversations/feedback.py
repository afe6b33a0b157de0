"""Feedback on a reply: 👍/👎 with an optional word, by the person whose
conversation it is. Staff read it in the admin (conversations.admin); it is
in the person's export and erased with them (conversations.personal_data)."""

from uuid import UUID

from django.db import transaction
from django.utils import timezone

from assistant_engine.organizations.members import Member
from conversations.models import Message, MessageFeedback

COMMENT_MAX_CHARS = 500  # MessageFeedback.comment's column


class ReplyNotFound(Exception):
    """No assistant message with this id in the member's own conversations."""


def reply_get_for_member(member: Member, message_id: UUID, *, for_update: bool = False) -> Message:
    """An assistant message the application wrote (its API id is its key) in a
    conversation of the member: anything else is not found."""
    queryset = Message.objects.filter(
        id=message_id, role=Message.Role.ASSISTANT,
        thread__organization_id=member.organization_id, thread__user_id=member.user_id,
    )
    message = (queryset.select_for_update(of=("self",)) if for_update else queryset).first()
    if message is None:
        raise ReplyNotFound
    return message


def feedback_give(member: Member, *, message_id: UUID, rating: str, comment: str = "") -> MessageFeedback:
    """Give or change the feedback on a reply (giving the same again changes nothing but its time)."""
    if rating not in MessageFeedback.Rating.values:
        raise ValueError(rating)
    now = timezone.now()
    with transaction.atomic():
        # Lock the reply: two clicks at once update one row instead of racing to create two.
        message = reply_get_for_member(member, message_id, for_update=True)
        feedback, _ = MessageFeedback.objects.update_or_create(
            message=message, defaults={"rating": rating, "comment": comment.strip()[:COMMENT_MAX_CHARS],
                                       "updated_at": now},
            create_defaults={"rating": rating, "comment": comment.strip()[:COMMENT_MAX_CHARS],
                             "created_at": now, "updated_at": now},
        )
    return feedback


def feedback_json(feedback: MessageFeedback) -> dict:
    return {
        "messageId": str(feedback.message_id),
        "rating": feedback.rating,
        "comment": feedback.comment,
        "createdAt": feedback.created_at.isoformat(),
        "updatedAt": feedback.updated_at.isoformat(),
    }

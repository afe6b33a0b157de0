"""The Telegram surface's part of a person's export and erasure."""

from assistant_engine.organizations.members import Member
from assistant_engine.organizations.personal_data import delete_in_order, iso
from assistant_engine.surfaces.telegram.models import LinkCode, StreamedReply, TelegramLink


def export_links(member: Member) -> list[dict]:
    return [
        {"telegramUserId": link.telegram_user_id, "chatId": link.chat_id, "active": link.active,
         "conversationId": str(link.thread_id) if link.thread_id else None, "createdAt": iso(link.created_at)}
        for link in TelegramLink.objects.filter(organization_id=member.organization_id, user_id=member.user_id)
    ]


def erase_links(user, batch_size: int) -> int:
    """Links, codes and replies still being streamed to the person's chats."""
    return delete_in_order((
        StreamedReply.objects.filter(turn__user=user),
        TelegramLink.objects.filter(user=user),
        LinkCode.objects.filter(user=user),
    ), batch_size)


def register() -> None:
    from assistant_engine.organizations.personal_data import register_eraser, register_exporter

    register_exporter("telegram", export_links)
    # Before the conversations (a link points at the person's thread).
    register_eraser("telegram", erase_links, order=15)

"""Linking a Telegram account to one membership with a one-time code.

A code is valid TELEGRAM_LINK_CODE_MINUTES, used once, stored as its SHA-256
only. The bot receiving `/start <code>` links the Telegram user to that
membership and makes it the active one (a person in several organizations
links each; `/org` switches).
"""

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from assistant_engine.organizations.members import Member, member_if_active
from assistant_engine.organizations.models import Membership
from assistant_engine.surfaces.telegram.models import LinkCode, TelegramLink


class InvalidCode(Exception):
    """Unknown, used or expired: the same answer for all three."""


class LinkedToAnother(Exception):
    """This Telegram account speaks for another person: a code can't take it over."""


class NotLinked(Exception):
    """This Telegram user speaks for no membership (or not for that one)."""


@dataclass(frozen=True)
class IssuedCode:
    code: str
    expires_at: datetime

    @property
    def deep_link(self) -> str:
        return f"https://t.me/{settings.TELEGRAM_BOT_USERNAME or 'your_bot'}?start={self.code}"


def code_hash(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


def link_code_create(member: Member, *, now: datetime | None = None) -> IssuedCode:
    now = now or timezone.now()
    # 128 bits; Telegram's `start` parameter allows A-Z a-z 0-9 _ - (64 at most).
    code = secrets.token_urlsafe(16)
    expires_at = now + timedelta(minutes=settings.TELEGRAM_LINK_CODE_MINUTES)
    LinkCode.objects.create(
        code_hash=code_hash(code), organization_id=member.organization_id, user_id=member.user_id,
        created_at=now, expires_at=expires_at,
    )
    return IssuedCode(code, expires_at)


def link_redeem(code: str, *, telegram_user_id: int, chat_id: int, now: datetime | None = None) -> TelegramLink:
    """Raises InvalidCode or LinkedToAnother (nothing written, the code still usable)."""
    now = now or timezone.now()
    with transaction.atomic():
        # Lock the row: the same code sent twice at once links once.
        stored = LinkCode.objects.select_for_update().filter(
            code_hash=code_hash(code), used_at__isnull=True, expires_at__gt=now
        ).first()
        if stored is None:
            raise InvalidCode
        stored.used_at = now
        stored.save(update_fields=["used_at"])
        if not Membership.objects.filter(organization_id=stored.organization_id, user_id=stored.user_id).exists():
            raise InvalidCode
        # An account linked to someone else is not taken over by their code (a
        # deep link they were tricked into opening would send their messages
        # into that person's conversations): it unlinks first.
        if TelegramLink.objects.filter(telegram_user_id=telegram_user_id).exclude(user_id=stored.user_id).exists():
            raise LinkedToAnother
        # Another account linked to this membership before: the new link replaces it.
        TelegramLink.objects.filter(organization_id=stored.organization_id, user_id=stored.user_id).delete()
        TelegramLink.objects.filter(organization_id=stored.organization_id, telegram_user_id=telegram_user_id).delete()
        TelegramLink.objects.filter(telegram_user_id=telegram_user_id, active=True).update(active=False)
        return TelegramLink.objects.create(
            telegram_user_id=telegram_user_id, chat_id=chat_id, organization_id=stored.organization_id,
            user_id=stored.user_id, active=True, created_at=now,
        )


def active_member(telegram_user_id: int) -> tuple[TelegramLink, Member]:
    """The link this Telegram user speaks through now and its verified
    member. Raises NotLinked (a link whose membership is gone is removed) or
    MembershipSuspended."""
    link = TelegramLink.objects.filter(telegram_user_id=telegram_user_id, active=True).first()
    if link is None:
        raise NotLinked
    membership = (
        Membership.objects.select_related("organization")
        .filter(organization_id=link.organization_id, user_id=link.user_id, user__is_active=True)
        .first()
    )
    if membership is None:
        link.delete()
        raise NotLinked
    # A suspended membership keeps its link (lifting restores it) but opens nothing.
    return link, member_if_active(membership)


def links_of_account(telegram_user_id: int) -> list[TelegramLink]:
    return list(
        TelegramLink.objects.filter(telegram_user_id=telegram_user_id)
        .select_related("organization").order_by("organization__slug")
    )


def link_switch(telegram_user_id: int, slug: str) -> TelegramLink:
    """Make the link to organization `slug` the active one. Raises NotLinked."""
    with transaction.atomic():
        # Lock this account's links: two /org at once leave one active.
        links = list(TelegramLink.objects.select_for_update().filter(telegram_user_id=telegram_user_id)
                     .select_related("organization"))
        chosen = next((link for link in links if link.organization.slug == slug), None)
        if chosen is None:
            raise NotLinked
        TelegramLink.objects.filter(telegram_user_id=telegram_user_id, active=True).update(active=False)
        TelegramLink.objects.filter(id=chosen.id).update(active=True)
        return chosen


def link_remove_for_account(telegram_user_id: int) -> tuple[TelegramLink, TelegramLink | None]:
    """`/unlink`: remove the active link; another link of the account, if
    any, becomes the active one. Raises NotLinked."""
    with transaction.atomic():
        # Lock this account's links: an /org at the same time can't leave two active.
        links = list(TelegramLink.objects.select_for_update().filter(telegram_user_id=telegram_user_id))
        removed = next((link for link in links if link.active), None)
        if removed is None:
            raise NotLinked
        removed.delete()
        return removed, _activate_another(telegram_user_id)


def _activate_another(telegram_user_id: int) -> TelegramLink | None:
    """The caller holds the account's links locked and none is active."""
    other = (TelegramLink.objects.filter(telegram_user_id=telegram_user_id)
             .select_related("organization").order_by("organization__slug").first())
    if other is not None:
        TelegramLink.objects.filter(id=other.id).update(active=True)
    return other


def link_for_member(member: Member) -> TelegramLink | None:
    return TelegramLink.objects.filter(organization_id=member.organization_id, user_id=member.user_id).first()


def link_remove(member: Member) -> bool:
    """The web page's "remove": the member's own link in this organization
    only; when it was the active one, another link of that account takes over."""
    with transaction.atomic():
        link = (TelegramLink.objects.select_for_update()
                .filter(organization_id=member.organization_id, user_id=member.user_id).first())
        if link is None:
            return False
        # Lock the account's other links too: see link_remove_for_account.
        list(TelegramLink.objects.select_for_update().filter(telegram_user_id=link.telegram_user_id))
        link.delete()
        if link.active:
            _activate_another(link.telegram_user_id)
    return True

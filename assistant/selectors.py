"""Reads of turns and cards, through the one tenant filter."""

from uuid import UUID

from django.db.models import QuerySet

from assistant.models import ActionCard, Turn
from assistant_engine.organizations.members import Member


class TurnNotFound(Exception):
    pass


def turns_of(member: Member) -> QuerySet[Turn]:
    return Turn.objects.filter(organization_id=member.organization_id, user_id=member.user_id)


def turn_get_for_member(member: Member, turn_id: UUID) -> Turn:
    turn = turns_of(member).filter(id=turn_id).first()
    if turn is None:
        raise TurnNotFound
    return turn


def cards_of(member: Member) -> QuerySet[ActionCard]:
    return ActionCard.objects.filter(organization_id=member.organization_id, user_id=member.user_id)

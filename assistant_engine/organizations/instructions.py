"""Instructions for the assistant: the organization's (set by its admins) and
each person's own in that organization. The assistant adds both to the system
prompt of every turn (assistant.instructions); they are bounded here, at the
one place they are written, whatever the door (API, organization page,
settings page)."""

from dataclasses import dataclass

from django.db import transaction

from assistant_engine.organizations.members import Member
from assistant_engine.organizations.models import Membership, Organization, OrganizationChange
from assistant_engine.organizations.services import change_record

INSTRUCTIONS_MAX_CHARS = 4000


class InstructionsTooLong(ValueError):
    """Over INSTRUCTIONS_MAX_CHARS characters: nothing is written."""


class NotAdmin(PermissionError):
    """Only a member with role `admin` sets the organization's instructions."""


@dataclass(frozen=True)
class Instructions:
    organization: str
    person: str


def instructions_get(member: Member) -> Instructions:
    """The organization's and the member's own (one query)."""
    row = Membership.objects.filter(organization_id=member.organization_id, user_id=member.user_id).values_list(
        "organization__instructions", "instructions").get()
    return Instructions(*row)


def _checked(text: str) -> str:
    # Line endings as the browser's textarea sends them count once, as the model sees them.
    text = text.replace("\r\n", "\n").strip()
    if len(text) > INSTRUCTIONS_MAX_CHARS:
        raise InstructionsTooLong
    return text


def my_instructions_set(member: Member, *, text: str) -> str:
    """The person's own instructions in the member's organization ("" clears them)."""
    text = _checked(text)
    Membership.objects.filter(organization_id=member.organization_id, user_id=member.user_id).update(
        instructions=text)
    return text


def organization_instructions_set(member: Member, *, text: str) -> str:
    """The organization's instructions, by one of its admins; recorded in its change log."""
    if not member.is_admin:
        raise NotAdmin
    text = _checked(text)
    with transaction.atomic():
        Organization.objects.filter(pk=member.organization_id).update(instructions=text)
        change_record(organization_id=member.organization_id, actor_id=member.user_id,
                      action=OrganizationChange.Kind.INSTRUCTIONS,
                      detail=f"{len(text)} characters" if text else "cleared")
    return text

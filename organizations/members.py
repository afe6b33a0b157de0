"""The one guard that turns an authenticated user into a verified Member.

Every service and selector of the product takes a `Member` first: it is the
proof that this user belongs to this organization, resolved once per request.
"""

from dataclasses import dataclass

from organizations.models import Membership


@dataclass(frozen=True)
class Member:
    organization_id: int
    user_id: int
    role: str
    organization_slug: str = ""

    @property
    def is_admin(self) -> bool:
        return self.role == Membership.Role.ADMIN


class NoOrganization(Exception):
    """The person belongs to no organization at all."""


class OrganizationNotFound(Exception):
    """The requested organization does not exist or the person is not in it."""


class OrganizationRequired(Exception):
    """The person is in several organizations and did not say which one."""


class MembershipSuspended(Exception):
    """The person's membership in the organization is suspended: no door opens
    (API, browser, MCP, Telegram all pass through `resolve_member`)."""


def member_from_membership(membership: Membership) -> Member:
    return Member(
        organization_id=membership.organization_id,
        user_id=membership.user_id,
        role=membership.role,
        organization_slug=membership.organization.slug,
    )


def memberships_of(user) -> list[Membership]:
    return list(Membership.objects.filter(user=user).select_related("organization").order_by("organization__name"))


def resolve_member_in(user, organization_id: int) -> Member:
    """The verified membership of `user` in one organization, by id (a token's). One query.

    A person who left that organization has, for this token, no organization at all.
    Raises MembershipSuspended when that membership is suspended."""
    if not getattr(user, "is_authenticated", False):
        raise NoOrganization
    membership = (
        Membership.objects.filter(user=user, organization_id=organization_id).select_related("organization").first()
    )
    if membership is None:
        raise NoOrganization
    return member_if_active(membership)


def resolve_member(user, requested_slug: str | None) -> Member:
    """The verified membership of `user` in the organization named by `requested_slug`.

    Without a slug, the person's only organization is implicit. One query.
    Raises MembershipSuspended when that membership is suspended.
    """
    if not getattr(user, "is_authenticated", False):
        raise NoOrganization
    if requested_slug:
        membership = (
            Membership.objects.filter(user=user, organization__slug=requested_slug)
            .select_related("organization")
            .first()
        )
        if membership is None:
            raise OrganizationNotFound
        return member_if_active(membership)
    memberships = list(Membership.objects.filter(user=user).select_related("organization")[:2])
    if not memberships:
        raise NoOrganization
    if len(memberships) > 1:
        raise OrganizationRequired
    return member_if_active(memberships[0])


def member_if_active(membership: Membership) -> Member:
    """The door every request passes (API, browser, MCP, Telegram): a suspended
    membership opens nothing (MembershipSuspended). Staff exports still read
    the person's data through `member_from_membership`."""
    if membership.is_suspended:
        raise MembershipSuspended
    return member_from_membership(membership)

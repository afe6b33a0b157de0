"""The one guard that turns an authenticated user into a verified Member.

Every service and selector of the product takes a `Member` first: it is the
proof that this user belongs to this organization, resolved once per request.
"""

from dataclasses import dataclass, field

from assistant_engine.organizations.models import Membership, Organization


@dataclass(frozen=True)
class MemberTerms:
    """What the person's turns in this organization run under, read by the
    guard's one query along with the membership (and its organization), so a
    submission does not read those rows again.

    As fresh as the request: a submission uses them (the model its turn is
    queued on, the cap its start reservation is checked against), while the
    worker re-reads the cap at every hold before a model call and re-checks
    the model's residency rules when it opens the client. Never keep a Member
    carrying terms beyond the request that resolved it."""

    # The organization's model option ("": the deployment's ASSISTANT_MODEL),
    # and which options its members may pick (Organization.MemberModels).
    model_choice: str
    # The person's own monthly cap in credits, and the organization's default
    # for members without one (None: no cap).
    own_cap_credits: int | None
    default_cap_credits: int | None
    member_models: str = "organization"
    history_mode: str = "summarize"  # Organization.HistoryMode
    untrusted_writes: str = "confirm"  # Organization.UntrustedWrites
    credit_alert_percents: str = ""  # Organization.credit_alert_percents ("": the deployment's)

    @property
    def cap_credits(self) -> int | None:
        return cap_that_applies(self.own_cap_credits, self.default_cap_credits)


def cap_that_applies(own_credits: int | None, default_credits: int | None) -> int | None:
    """A person's monthly cap in credits: their own, else the organization's default, else none."""
    return own_credits if own_credits is not None else default_credits


@dataclass(frozen=True)
class Member:
    organization_id: int
    user_id: int
    role: str
    organization_slug: str = ""
    # The product's key for the tenant (organizations/tenants.py), so a tool
    # filters the product's own models by it; the organization's slug in the
    # engine's own mode. "" when the Member was made without its organization.
    tenant: str = field(default="", compare=False)
    # None when this Member was not made by the guard from a membership row (a
    # worker, an MCP token's claims, a script): the services then read the rows.
    # Not part of a Member's identity (equality, hash).
    terms: MemberTerms | None = field(default=None, compare=False)

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
    """The Member of a membership read with its organization (`select_related`):
    no further query, the terms included."""
    organization = membership.organization
    return Member(
        organization_id=membership.organization_id,
        user_id=membership.user_id,
        role=membership.role,
        organization_slug=organization.slug,
        tenant=tenant_of(organization),
        terms=MemberTerms(
            model_choice=organization.model_option,
            own_cap_credits=membership.monthly_cap_credits,
            default_cap_credits=organization.default_member_cap_credits,
            member_models=organization.member_models,
            history_mode=organization.history_mode,
            untrusted_writes=organization.untrusted_writes,
            credit_alert_percents=organization.credit_alert_percents,
        ),
    )


def untrusted_writes_of(member: Member) -> str:
    """What a write does after third-party content in the member's organization (Organization.UntrustedWrites)."""
    if member.terms is not None:
        return member.terms.untrusted_writes
    return Organization.objects.values_list("untrusted_writes", flat=True).get(pk=member.organization_id)


def tenant_of(organization) -> str:
    """The product's tenant key of an organization, else its slug."""
    return organization.tenant_key or organization.slug


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
        if "\x00" in requested_slug:  # no slug holds one, and PostgreSQL text can't: not a query
            raise OrganizationNotFound
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

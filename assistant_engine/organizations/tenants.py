"""The product's guard: a product that installs the engine resolves its people
itself (settings.ASSISTANT_MEMBER_RESOLVER names `resolve(request) -> {tenant,
tenant_name, user, admin} | None`), and the engine keeps an organization per
product tenant (Organization.tenant_key), created on the tenant's first use
with ASSISTANT_DEFAULT_MONTHLY_CREDITS, and the person's membership in it, its
role and the organization's name following what the product says. From there
on every service re-checks objects against that Member as in the engine's own
mode; a suspension by the organization's admins still closes every door.
"""

import hashlib
import logging

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string
from django.utils.text import slugify

from assistant_engine.organizations.members import Member, NoOrganization, member_if_active
from assistant_engine.organizations.models import Membership, Organization

log = logging.getLogger("assistant.tenants")

RESOLVED = "_assistant_resolved_member"  # on the request: resolved once per request


def resolver_configured() -> bool:
    return bool(settings.ASSISTANT_MEMBER_RESOLVER)


def product_member(request) -> Member:
    """The Member the product's guard says this request is; NoOrganization when
    it says "not a member" (None). Resolved once per request."""
    request = getattr(request, "_request", request)  # DRF's Request wraps Django's
    cached = getattr(request, RESOLVED, None)
    if cached is None:
        found = import_string(settings.ASSISTANT_MEMBER_RESOLVER)(request)
        cached = _checked(found) if found is not None else False
        setattr(request, RESOLVED, cached)
    if cached is False:
        raise NoOrganization
    membership = tenant_membership(**cached)
    return member_if_active(membership)


def _checked(found) -> dict:
    """What the resolver answered, or ImproperlyConfigured naming what is wrong (a product's bug)."""
    if not isinstance(found, dict) or not isinstance(found.get("tenant"), str) or not found["tenant"].strip():
        raise ImproperlyConfigured("ASSISTANT_MEMBER_RESOLVER must return None or a dict with a non-empty "
                                   "string 'tenant', 'tenant_name', 'user' and 'admin'.")
    user = found.get("user")
    if user is None or not getattr(user, "is_authenticated", False) or user.pk is None:
        raise ImproperlyConfigured("ASSISTANT_MEMBER_RESOLVER returned a member without a signed-in 'user'.")
    return {"tenant": found["tenant"][:200], "tenant_name": str(found.get("tenant_name") or found["tenant"])[:200],
            "user": user, "admin": bool(found.get("admin"))}


def tenant_membership(*, tenant: str, tenant_name: str, user, admin: bool) -> Membership:
    """The person's membership in the tenant's organization, made on first use
    and kept in step with the product (role, name). One query once made."""
    role = Membership.Role.ADMIN if admin else Membership.Role.MEMBER
    membership = (Membership.objects.filter(user=user, organization__tenant_key=tenant)
                  .select_related("organization").first())
    if membership is None:
        organization = tenant_organization(tenant, tenant_name)
        # Two first requests at once: the pair's unique constraint keeps one, get_or_create returns it.
        membership, created = Membership.objects.get_or_create(organization=organization, user=user,
                                                               defaults={"role": role})
        membership.organization = organization
        if created:
            log.info("tenant_member_created", extra={"organization_id": organization.pk, "user_id": user.pk})
    _follow_product(membership, role, tenant_name)
    return membership


def tenant_organization(tenant: str, tenant_name: str) -> Organization:
    """The tenant's organization, created once even when two first requests race
    (the unique tenant_key; get_or_create reads the winner's row)."""
    organization, created = Organization.objects.get_or_create(tenant_key=tenant, defaults={
        "name": tenant_name, "slug": tenant_slug(tenant, tenant_name),
        "monthly_credits": settings.ASSISTANT_DEFAULT_MONTHLY_CREDITS,
    })
    if created:
        log.info("tenant_organization_created", extra={"organization_id": organization.pk})
    return organization


def tenant_slug(tenant: str, tenant_name: str) -> str:
    """Readable and unique: the name's slug and a digest of the product's key."""
    digest = hashlib.sha256(tenant.encode()).hexdigest()[:10]
    return f"{slugify(tenant_name)[:40] or 'tenant'}-{digest}"


def _follow_product(membership: Membership, role: str, tenant_name: str) -> None:
    """The product is the source of truth for the person's role and the tenant's name."""
    if membership.role != role:
        Membership.objects.filter(pk=membership.pk).update(role=role)
        membership.role = role
    organization = membership.organization
    if organization.name != tenant_name:
        Organization.objects.filter(pk=organization.pk).update(name=tenant_name)
        organization.name = tenant_name

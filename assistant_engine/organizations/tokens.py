"""API tokens (django-rest-knox, model `ApiToken`): hashed, expiring, and bound
to one organization.

Only the SHA-512 digest of a token is stored; the token itself is returned
once, at creation. `Authorization: Bearer …` and `Authorization: Token …` are
both accepted. A token acts in its own organization only (organizations/api.py).
"""

import logging
from datetime import datetime, timedelta
from uuid import UUID

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object
from knox.auth import TokenAuthentication
from rest_framework import exceptions
from rest_framework.authentication import get_authorization_header

from assistant_engine.organizations.members import Member
from assistant_engine.organizations.models import ApiToken
from assistant_engine.organizations.purge import purge_in_batches

logger = logging.getLogger("assistant_engine.organizations.tokens")

ACCEPTED_PREFIXES = (b"bearer", b"token")
MAX_TOKEN_DAYS = 366
# Live tokens one person may hold in one organization: enough for every
# script, few enough that a page can't be used to fill the table.
MAX_TOKENS_PER_PERSON = 20


class TooManyTokens(Exception):
    """The person already holds MAX_TOKENS_PER_PERSON live tokens in this organization."""


class TokenNotFound(Exception):
    """No such token among the person's tokens in this organization."""


class OrganizationTokenAuthentication(TokenAuthentication):
    """knox's authentication with both header prefixes, one query per request."""

    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() not in ACCEPTED_PREFIXES:
            return None  # another scheme, or none: the session may authenticate
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed(_("Invalid token header: expected one token after the scheme."))
        user, auth_token = self.authenticate_credentials(parts[1])
        # The API's doors (/api/, /ai/) authenticate here; /mcp calls
        # authenticate_credentials itself and so accepts an MCP-only token.
        if auth_token.mcp_only:
            raise exceptions.AuthenticationFailed(_("This token is for MCP clients only."))
        return user, auth_token

    def authenticate_credentials(self, token):
        # Tokens are ASCII without NUL: anything else is refused before knox decodes it (a
        # Latin-1 byte failed its UTF-8 decoding) or queries it (PostgreSQL text can't hold a NUL).
        if not token.isascii() or b"\x00" in token:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        user, auth_token = super().authenticate_credentials(token)
        token_used(auth_token)
        return user, auth_token

    def authenticate_header(self, request):
        return "Bearer"

    def _cleanup_token(self, auth_token) -> bool:
        # knox also walks every other token of the person on each request; an
        # expired token is refused (and deleted) here, the others when used.
        if auth_token.expiry is not None and auth_token.expiry < timezone.now():
            auth_token.delete()
            return True
        return False


class OrganizationTokenScheme(OpenApiAuthenticationExtension):
    """The schema's security scheme for it (`Authorization: Bearer …`)."""

    target_class = OrganizationTokenAuthentication
    name = "bearerToken"

    def get_security_definition(self, auto_schema):
        return build_bearer_security_scheme_object(header_name="Authorization", token_prefix="Bearer")  # noqa: S106


def create_token(member: Member, *, days: int | None = None, name: str = "",
                 mcp_only: bool = False) -> tuple[ApiToken, str]:
    """A new token of the member's person in the member's organization;
    `mcp_only`: accepted at /mcp only, never by the API.
    Returns (the row, the token itself — shown once, never stored)."""
    days = settings.API_TOKEN_DAYS if days is None else days
    if not 1 <= days <= MAX_TOKEN_DAYS:
        raise ValueError(f"A token lives from 1 to {MAX_TOKEN_DAYS} days, not {days}.")
    # Not locked: two creations at once may pass the cap by one, which is harmless.
    if len(tokens_of(member)) >= MAX_TOKENS_PER_PERSON:
        raise TooManyTokens
    user = get_user_model().objects.get(pk=member.user_id)
    return ApiToken.objects.create(user, timedelta(days=days), organization_id=member.organization_id, name=name[:80],
                                   mcp_only=mcp_only)


# A token's last use is written at most once a minute: a script's burst of
# requests costs one UPDATE, not one per request.
LAST_USE_PRECISION = timedelta(minutes=1)


def token_used(auth_token: ApiToken) -> None:
    """Record that a request authenticated with the token (for its owner's page)."""
    now = timezone.now()
    if auth_token.last_used_at is not None and now - auth_token.last_used_at < LAST_USE_PRECISION:
        return
    # Conditional: of concurrent requests, one writes.
    ApiToken.objects.filter(pk=auth_token.pk).filter(
        Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USE_PRECISION)
    ).update(last_used_at=now)
    auth_token.last_used_at = now


def tokens_of(member: Member) -> list[ApiToken]:
    """The person's live tokens in this organization, newest first."""
    return list(
        ApiToken.objects.filter(
            user_id=member.user_id, organization_id=member.organization_id, expiry__gt=timezone.now()
        ).order_by("-created")
    )


def token_of(member: Member, public_id: UUID) -> ApiToken:
    """One of the person's live tokens in this organization; anyone else's is not found."""
    token = ApiToken.objects.filter(
        public_id=public_id, user_id=member.user_id, organization_id=member.organization_id, expiry__gt=timezone.now()
    ).first()
    if token is None:
        raise TokenNotFound
    return token


def revoke_token(member: Member, public_id: UUID) -> None:
    """Delete one of the person's tokens in this organization; anyone else's is not found."""
    with transaction.atomic():
        deleted, _ = ApiToken.objects.filter(
            public_id=public_id, user_id=member.user_id, organization_id=member.organization_id
        ).delete()
    if not deleted:
        raise TokenNotFound


def delete_tokens_of_user(user_id: int) -> int:
    """Every API token of the person, in every organization (erasure). Returns how many."""
    return ApiToken.objects.filter(user_id=user_id).delete()[0]


def delete_tokens_in(*, organization_id: int, user_id: int) -> int:
    """Every API token of the person in one organization (their membership
    there is removed: a token must not come back to life if they are added
    again). Returns how many."""
    return ApiToken.objects.filter(organization_id=organization_id, user_id=user_id).delete()[0]


def expired_tokens_purge(*, now: datetime | None = None, batch_size: int | None = None) -> int:
    """Delete the expired API tokens, one transaction per batch (a long purge
    never holds the table). Returns how many; logs counts only.

    knox deletes an expired token when it is presented again; this removes
    the ones nobody presents.
    """
    expired = ApiToken.objects.filter(expiry__lt=now or timezone.now()).order_by("expiry")
    return purge_in_batches(expired, batch_size=batch_size or settings.API_TOKEN_PURGE_BATCH_SIZE,
                            job="purge_expired_tokens", logger=logger)

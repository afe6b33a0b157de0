"""Who calls /mcp: the person's MCP-only token (`Authorization: Bearer`), in the token's organization.

The one place the MCP server checks a token: it runs on every HTTP request of
a session (the SDK's bearer middleware), so a token revoked or a membership
removed mid-session stops the next request.
"""

import logging

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from mcp.server.auth.provider import AccessToken
from rest_framework.exceptions import AuthenticationFailed

from assistant_engine.organizations.members import Member, MembershipSuspended, NoOrganization, resolve_member_in
from assistant_engine.organizations.tokens import OrganizationTokenAuthentication

logger = logging.getLogger("assistant_engine.surfaces.mcp")


def member_for_token(raw: str) -> Member | None:
    """The verified Member a raw MCP-only token stands for, in the token's own
    organization (as on the API), or None (→ 401): unknown, expired, an API
    token (unless MCP_ACCEPTS_API_TOKENS), an inactive person, one who left
    that organization, or one whose membership there is suspended."""
    try:
        user, token = OrganizationTokenAuthentication().authenticate_credentials(raw.encode())
    except AuthenticationFailed:
        return None
    if not token.mcp_only and not settings.MCP_ACCEPTS_API_TOKENS:
        logger.info("mcp_api_token_refused", extra={"token_id": token.pk})
        return None
    try:
        return resolve_member_in(user, token.organization_id)
    except (NoOrganization, MembershipSuspended):
        return None


def _checked_once(raw: str) -> Member | None:
    # As around a request's work (see server._like_a_request): no connection
    # kept past its age in the thread that runs this.
    close_old_connections()
    try:
        return member_for_token(raw)
    finally:
        close_old_connections()


class ApiTokenVerifier:
    """The SDK's TokenVerifier protocol over the product's API tokens."""

    async def verify_token(self, token: str) -> AccessToken | None:
        member = await sync_to_async(_checked_once)(token)
        if member is None:
            return None
        return AccessToken(
            token=token, client_id=f"user:{member.user_id}", scopes=[],
            subject=f"{member.organization_id}:{member.user_id}",
            claims={"organization_id": member.organization_id, "user_id": member.user_id, "role": member.role,
                    "organization_slug": member.organization_slug, "tenant": member.tenant},
        )


def member_of(access_token: AccessToken) -> Member:
    claims = access_token.claims or {}
    return Member(organization_id=claims["organization_id"], user_id=claims["user_id"], role=claims["role"],
                  organization_slug=claims["organization_slug"], tenant=claims.get("tenant", ""))

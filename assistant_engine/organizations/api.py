"""The one door to tenant data on the API: every view inherits MemberAPIView."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import exceptions, permissions, renderers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.views import APIView

from assistant_engine.foundation.api_errors import ApiError, api_exception_handler
from assistant_engine.foundation.openapi import ApiAutoSchema
from assistant_engine.foundation.parsers import SafeJSONParser
from assistant_engine.foundation.throttles import AnonymousThrottle, PersonActionThrottle
from assistant_engine.organizations.members import (
    Member,
    MembershipSuspended,
    NoOrganization,
    OrganizationNotFound,
    OrganizationRequired,
    resolve_member,
    resolve_member_in,
)
from assistant_engine.organizations.models import ApiToken
from assistant_engine.organizations.tenants import product_member, resolver_configured
from assistant_engine.organizations.tokens import OrganizationTokenAuthentication

ORGANIZATION_HEADER = "HTTP_X_ORGANIZATION"
SESSION_ORGANIZATION_KEY = "organization"

ORGANIZATION_PARAMETER = OpenApiParameter(
    name="X-Organization",
    type=OpenApiTypes.STR,
    location=OpenApiParameter.HEADER,
    required=False,
    description="Slug of the active organization; optional when the person belongs to only one, and with an "
    "API token (it acts in its own organization: naming another one is 403 token_organization_mismatch).",
)


def requested_organization(request) -> str | None:
    """The header wins; the browser's session choice is the fallback."""
    slug = request.META.get(ORGANIZATION_HEADER, "").strip()
    if slug:
        return slug
    session = getattr(request, "session", None)
    return session.get(SESSION_ORGANIZATION_KEY) if session is not None else None


def token_member(request, token: ApiToken) -> Member:
    """A token acts in its own organization, whatever the session says; a header
    naming another organization is refused rather than silently ignored."""
    member = resolve_member_in(request.user, token.organization_id)
    slug = request.META.get(ORGANIZATION_HEADER, "").strip()
    if slug and slug != member.organization_slug:
        resolve_member(request.user, slug)  # an organization not theirs stays not found (404)
        raise ApiError(
            status_code=status.HTTP_403_FORBIDDEN,
            code="token_organization_mismatch",
            detail="This API token acts in its own organization only: drop the X-Organization header or use "
            "a token of that organization.",
        )
    return member


def member_for_request(request) -> Member:
    try:
        if isinstance(request.auth, ApiToken):
            return token_member(request, request.auth)
        if resolver_configured():
            return product_member(request)
        return resolve_member(request.user, requested_organization(request))
    except NoOrganization:
        if resolver_configured():
            raise ApiError(
                status_code=status.HTTP_403_FORBIDDEN,
                code="not_a_member",
                detail="The product does not let you use the assistant here.",
            ) from None
        raise ApiError(
            status_code=status.HTTP_403_FORBIDDEN,
            code="no_organization",
            detail="You do not belong to any organization.",
        ) from None
    except OrganizationNotFound:
        raise ApiError(
            status_code=status.HTTP_404_NOT_FOUND,
            code="organization_not_found",
            detail="No such organization among yours.",
        ) from None
    except OrganizationRequired:
        raise ApiError(
            status_code=status.HTTP_400_BAD_REQUEST,
            code="organization_required",
            detail="You belong to several organizations: name one in the X-Organization header.",
        ) from None
    except MembershipSuspended:
        raise ApiError(
            status_code=status.HTTP_403_FORBIDDEN,
            code="membership_suspended",
            detail="Your membership in this organization is suspended; ask its administrators.",
        ) from None


class MemberAPIView(APIView):
    """Resolves `self.member` after authentication, before any handler runs.

    Subclasses never filter by tenant themselves: they pass `self.member` to a
    service or selector, which answers *not found* for anything not theirs.
    """

    member: Member

    # The engine's API is the same whatever the product's REST_FRAMEWORK says
    # (its own API may authenticate, parse or fail differently): each policy is
    # the view's own, not a default read from the settings.
    authentication_classes = [OrganizationTokenAuthentication, SessionAuthentication]
    permission_classes = [permissions.IsAuthenticated]
    throttle_classes = [AnonymousThrottle, PersonActionThrottle]
    renderer_classes = [renderers.JSONRenderer]
    parser_classes = [SafeJSONParser]
    schema = ApiAutoSchema()

    def get_exception_handler(self):
        return api_exception_handler

    def perform_authentication(self, request):
        # Anonymous callers, and wrong tokens, are throttled per address before
        # they are told 401 (DRF would check throttles only after permissions).
        try:
            super().perform_authentication(request)
        except exceptions.AuthenticationFailed:
            self.check_throttles(request)
            raise

    def check_permissions(self, request):
        if not request.user.is_authenticated:
            self.check_throttles(request)
        super().check_permissions(request)

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        self.member = member_for_request(request)

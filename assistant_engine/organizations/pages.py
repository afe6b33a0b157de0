"""The browser's door to tenant data: the logged-in person as a verified Member.

Every page of the deployment uses it: the assistant's own pages (web/) and the
host product's (workspace/), which can't import web/ (the doors sit on top).
It names templates and URLs of the browser UI only by name.

The API reads the organization from the X-Organization header, else from the
session; the pages always use the session, and store the organization they
resolved there, so that requests the browser cannot add a header to (the SSE
stream, the export download) act in the organization the page shows.
"""

from functools import wraps
from urllib.parse import urlencode

from django.contrib.auth.views import redirect_to_login
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from assistant_engine.organizations.api import SESSION_ORGANIZATION_KEY
from assistant_engine.organizations.members import (
    Member,
    MembershipSuspended,
    NoOrganization,
    OrganizationNotFound,
    OrganizationRequired,
    memberships_of,
    resolve_member,
)
from assistant_engine.organizations.tenants import product_member, resolver_configured


def member_for_session(request) -> Member:
    """Raises NoOrganization, or OrganizationRequired when the person must choose.
    With a product's guard (ASSISTANT_MEMBER_RESOLVER), the product says who and where."""
    if resolver_configured():
        member = product_member(request)
        if request.session.get(SESSION_ORGANIZATION_KEY) != member.organization_slug:
            request.session[SESSION_ORGANIZATION_KEY] = member.organization_slug  # the stream, the downloads
        return member
    chosen = request.session.get(SESSION_ORGANIZATION_KEY)
    try:
        member = resolve_member(request.user, chosen)
    except OrganizationNotFound:
        # Removed from the organization chosen earlier: forget that choice.
        request.session.pop(SESSION_ORGANIZATION_KEY, None)
        member = resolve_member(request.user, None)
    if chosen != member.organization_slug:
        request.session[SESSION_ORGANIZATION_KEY] = member.organization_slug
    return member


def has_other_organizations(user) -> bool:
    """Whether a suspended person may work elsewhere: a membership not suspended."""
    return any(membership.suspended_at is None for membership in memberships_of(user))


def member_required(view=None, *, fragment: bool = False):
    """Login and a verified member (`request.member`) before the view runs.

    A page sends an anonymous visitor to the login page and a person of several
    organizations to the chooser; a fragment (fetched by the page's script)
    answers 401/409 instead, which the script turns into a reload.
    """

    def decorate(view_function):
        @wraps(view_function)
        def wrapper(request, *args, **kwargs):
            if not request.user.is_authenticated:
                if fragment:
                    return HttpResponse("Log in again.", status=401, content_type="text/plain")
                return redirect_to_login(request.get_full_path())
            try:
                request.member = member_for_session(request)
            except OrganizationRequired:
                if fragment:
                    return HttpResponse("Choose an organization.", status=409, content_type="text/plain")
                query = urlencode({"next": request.get_full_path()})
                return redirect(f"{reverse('web-organizations')}?{query}")
            except NoOrganization:
                if resolver_configured():  # the product's guard said "not a member": its own login
                    if fragment:
                        return HttpResponse("Not a member.", status=403, content_type="text/plain")
                    return redirect_to_login(request.get_full_path())
                return render(request, "assistant/no_organization.html", status=403)
            except MembershipSuspended:
                if fragment:
                    return HttpResponse("Your membership is suspended.", status=403, content_type="text/plain")
                return render(request, "assistant/no_organization.html", {
                    "suspended": True, "other_organizations": has_other_organizations(request.user)}, status=403)
            return view_function(request, *args, **kwargs)

        return wrapper

    return decorate(view) if view is not None else decorate

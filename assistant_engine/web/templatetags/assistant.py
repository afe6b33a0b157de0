"""`{% load assistant %}{% assistant_panel %}`: the assistant beside a host page.

It renders the launcher (a button named "Assistant") and the panel (a
complementary landmark named "Assistant") holding the <assistant-chat>
component, as the person left it (web/panel.py). A page says what it has open
with `{% assistant_panel context_kind="note" context_id=note.id %}`.

The tag alone is enough: on a page of the product's own (extending none of
ours) it also brings, once, everything the panel needs (templates/assistant/
_assets.html): the page's config for the scripts (where the engine is served,
the CSRF token, the organization), the styles (app.css, the code colours,
KaTeX's, panel.css), the JavaScript catalog, KaTeX and app.js. On our own pages
base.html brings them in its <head> ({% assistant_head %}), and the panel adds
only its own stylesheet.
Without a signed-in member (anonymous, or no organization yet) it renders nothing.
"""

from django import template
from django.conf import settings
from django.middleware.csrf import get_token
from django.shortcuts import resolve_url
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe

from assistant_engine.organizations.members import (
    Member,
    MembershipSuspended,
    NoOrganization,
    OrganizationRequired,
)
from assistant_engine.organizations.pages import member_for_session
from assistant_engine.web.panel import panel_context
from credits.selectors import credits_summary

register = template.Library()

ASSETS_RENDERED = "_assistant_assets_rendered"  # on the request: this page has them already


def script_config(request, member: Member) -> dict:
    """What the scripts read from the page (api.js): the roots every path is
    built from, at whatever prefix the product includes the engine."""
    api_root = reverse("api-chat").removesuffix("chat")
    return {
        "base": reverse("web-chat"),
        "api": api_root,
        # The esm-ai-memory door's root and the person it answers for: the
        # offline client (memory.js) syncs only the store of this person.
        "ai": reverse("ai-conversation-list").removesuffix("conversations"),
        "user": str(member.user_id),
        "csrfToken": get_token(request),
        "organization": member.organization_slug,
    }


def _claim_assets(request) -> bool:
    """True the first time on this request: the caller renders the assets."""
    if getattr(request, ASSETS_RENDERED, False):
        return False
    setattr(request, ASSETS_RENDERED, True)
    return True


@register.simple_tag(takes_context=True)
def assistant_head(context) -> str:
    """base.html's <head>, for a signed-in member: the scripts' config and the
    styles a conversation needs (base.html loads app.css and the scripts itself)."""
    request, member = context.get("request"), context.get("member")
    if request is None or member is None or not _claim_assets(request):
        return ""
    return render_to_string("assistant/_assets.html", {"config": script_config(request, member), "head": True})


@register.simple_tag(takes_context=True)
def assistant_panel(context, context_kind: str = "", context_id="") -> str:
    request = context.get("request")
    if request is None or not request.user.is_authenticated:
        return ""
    member = getattr(request, "member", None)
    if member is None:  # a host view without the door: resolve the person here
        try:
            member = member_for_session(request)
        except (NoOrganization, OrganizationRequired, MembershipSuspended):
            return ""
    values = panel_context(request, member, context_kind=context_kind, context_id=str(context_id))
    if context.get("credits") is None:  # a host page without the top bar's context
        values["credits"] = credits_summary(member)
    assets = ""
    if _claim_assets(request):  # a page of the product's own: the tag brings everything
        assets = render_to_string("assistant/_assets.html", {"config": script_config(request, member)})
    panel = render_to_string("assistant/_panel.html", {**context.flatten(), **values}, request=request)
    return mark_safe(assets + panel)  # noqa: S308 (both rendered by our templates, escaped there)


@register.simple_tag
def assistant_logout_url() -> str:
    """Where the sign-out form posts: the product's own sign-out (a URL name or
    a path, settings.ASSISTANT_LOGOUT_URL), the engine's in the demo."""
    return resolve_url(settings.ASSISTANT_LOGOUT_URL)

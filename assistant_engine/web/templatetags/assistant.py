"""`{% load assistant %}{% assistant_panel %}`: the assistant beside a host page.

It renders the launcher (a button named "Assistant") and the panel (a
complementary landmark named "Assistant") holding the <assistant-chat>
component, as the person left it (web/panel.py). A page says what it has open
with `{% assistant_panel context_kind="note" context_id=note.id %}`.

The page must load static/web/app.js (base.html does) and static/web/panel.css.
Without a signed-in member (anonymous, or no organization yet) it renders nothing.
"""

from django import template
from django.template.loader import render_to_string

from assistant_engine.organizations.members import MembershipSuspended, NoOrganization, OrganizationRequired
from assistant_engine.organizations.pages import member_for_session
from assistant_engine.web.panel import panel_context
from credits.selectors import credits_summary

register = template.Library()


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
    return render_to_string("assistant/_panel.html", {**context.flatten(), **values}, request=request)

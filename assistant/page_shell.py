"""What the top bar of every page shows (the assistant's pages and the host
product's): credits, where data is processed, the person's organizations."""

from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext as _

from assistant_engine.organizations.alert_percents import alert_percents
from assistant_engine.organizations.members import memberships_of
from assistant_engine.providers.org_models import option_for_choice
from credits.alerts import used_percent
from credits.selectors import credits_summary, person_credits


def shell_context(request) -> dict:
    """What the header shows on every page: credits, where data is processed, organizations."""
    member = request.member
    memberships = memberships_of(request.user)
    organization = next((m.organization for m in memberships if m.organization_id == member.organization_id), None)
    try:
        # The organization's model choice (the top bar and the data page follow it).
        option = option_for_choice(member.organization_id, organization.model_option if organization else "")
        processing = {"label": _(option.processing_label), "location": option.location, "model": option.label}
    except ImproperlyConfigured:
        processing = {"label": _("No model available"), "location": "none", "model": ""}
    credits = credits_summary(member)
    # Under a cap, the pill counts the person's credits, not the organization's.
    mine = person_credits(member, credits)
    return {
        "member": member,
        "organization": organization,
        "organizations": [m.organization for m in memberships] if len(memberships) > 1 else [],
        "credits": credits,
        "person_credits": mine,
        "credits_left": (mine or credits).remaining_credits,
        "credits_alert": credits_alert(member, credits),
        "processing": processing,
    }


def credits_alert(member, credits) -> int | None:
    """For an organization's admins, the highest alert threshold the month's use
    has reached (credits/alerts.py e-mails them once; the pages say it while it
    lasts), from the totals already read: no query."""
    if not member.is_admin:
        return None
    used = used_percent(credits.used_micros, credits.granted_micros)
    # The organization's thresholds came with the guard's membership query (Member.terms).
    percents = alert_percents(member.terms.credit_alert_percents if member.terms else "")
    return max((percent for percent in percents if percent <= used), default=None)

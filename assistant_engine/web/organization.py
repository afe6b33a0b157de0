"""The organization page, for members with role `admin` (anyone else: 404):
the model choice, provider keys (add, replace, remove; the hint only), the
month's usage per person, the caps, the members with their role and state,
and the log of every change. Thin views over providers.org_models and
organizations.services; each POST redirects back (or answers 400)."""

import re
from dataclasses import dataclass
from datetime import datetime
from functools import wraps

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.db.models import OuterRef, Subquery
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from assistant import exports
from assistant_engine.foundation.downloads import download_response
from assistant_engine.foundation.people import login_field
from assistant_engine.organizations.alert_percents import InvalidThresholds, alert_percents
from assistant_engine.organizations.instructions import (
    INSTRUCTIONS_MAX_CHARS,
    InstructionsTooLong,
    organization_instructions_set,
)
from assistant_engine.organizations.members import Member
from assistant_engine.organizations.models import Membership, Organization, OrganizationChange
from assistant_engine.organizations.services import (
    CannotSuspendSelf,
    credit_alert_percents_set,
    default_cap_set_by_admin,
    history_mode_set,
    member_cap_set_by_admin,
    member_restore,
    member_suspend,
    untrusted_writes_set,
)
from assistant_engine.providers.catalog import CATALOG
from assistant_engine.providers.models import ProviderKey
from assistant_engine.providers.org_models import (
    KeyRefused,
    ModelNotAllowed,
    ProviderNotConfigured,
    allowed_options,
    member_models_set,
    model_choose,
    provider_key_remove,
    provider_key_save,
)
from assistant_engine.web.changes import change_sentence
from assistant_engine.web.instructions import InstructionsForm, too_long
from assistant_engine.web.members import member_required
from assistant_engine.web.spend import SpendSection, spend_section
from assistant_engine.web.views import shell_context, with_csp
from credits.money import credits_from_micros, current_month
from credits.spend import organization_spend, people_ranking

CHANGES_SHOWN = 50


# --- Reads ------------------------------------------------------------------------


@dataclass
class MemberRow:
    user_id: int
    username: str
    role: str
    cap_credits: int | None
    suspended_at: datetime | None
    suspended_reason: str
    turns: int = 0
    used_credits: int = 0
    reserved_credits: int = 0


@dataclass
class OrganizationPage:
    organization: Organization
    month: str
    options: list
    keys: list[ProviderKey]
    members: list[MemberRow]
    changes: list[OrganizationChange]
    spend: SpendSection


def organization_page(member: Member) -> OrganizationPage:
    """What the page shows; a member without the admin role gets Http404."""
    admin_only(member)
    organization = Organization.objects.get(pk=member.organization_id)
    month = current_month(timezone.now())
    # Each name by its primary key (a subquery per member): a join let the
    # planner hash the whole user table, everyone's people, once it was small
    # enough to read whole (bench-scale).
    username = get_user_model().objects.filter(pk=OuterRef("user_id")).values(login_field())[:1]
    rows = {
        membership.user_id: MemberRow(
            membership.user_id, membership.username, membership.role, membership.monthly_cap_credits,
            membership.suspended_at, membership.suspended_reason,
        )
        for membership in Membership.objects.filter(organization_id=member.organization_id)
        .annotate(username=Subquery(username)).order_by("username")
    }
    usage = exports.usage_rows(member.organization_id, month)
    for _month, user_id, _name, turns, _credits, _reserved_credits, used, reserved in usage:
        if user_id in rows:
            row = rows[user_id]
            row.turns, row.used_credits, row.reserved_credits = turns, credits_from_micros(used), \
                credits_from_micros(reserved)
    return OrganizationPage(
        organization=organization, month=month, options=allowed_options(member.organization_id),
        keys=list(ProviderKey.objects.filter(organization_id=member.organization_id).order_by("provider")),
        members=list(rows.values()),
        changes=_said(OrganizationChange.objects.filter(organization_id=member.organization_id)[:CHANGES_SHOWN]),
        # The spend charts: two queries of day and month totals; the people's from the usage just read.
        spend=spend_section(organization_spend(member.organization_id, month), people_ranking(
            (user_id, name, turns, used) for _m, user_id, name, turns, _c, _r, used, _held in usage)),
    )


def _said(changes) -> list[OrganizationChange]:
    """The changes, each with its `sentence` (web/changes.py)."""
    labels = {option.id: option.label for option in CATALOG}
    changes = list(changes)
    for change in changes:
        change.sentence = change_sentence(change, labels)
    return changes


def admin_only(member: Member) -> None:
    # Not found, as for anything that is not theirs: the page's existence is not a secret,
    # but a 404 keeps one answer for every refusal.
    if not member.is_admin:
        raise Http404("No such page.")


# --- Forms ------------------------------------------------------------------------


class CapField(forms.IntegerField):
    """Whole credits; empty means no cap."""

    def __init__(self, **kwargs):
        super().__init__(required=False, min_value=0, max_value=10_000_000, **kwargs)


class ModelForm(forms.Form):
    option = forms.CharField(required=False, max_length=100)


class MemberModelsForm(forms.Form):
    rule = forms.ChoiceField(choices=Organization.MemberModels.choices)


class HistoryModeForm(forms.Form):
    mode = forms.ChoiceField(choices=Organization.HistoryMode.choices)


class UntrustedWritesForm(forms.Form):
    mode = forms.ChoiceField(choices=Organization.UntrustedWrites.choices)


class KeyForm(forms.Form):
    provider = forms.ChoiceField(choices=ProviderKey.Provider.choices)
    key = forms.CharField(strip=True, max_length=500)


class CapForm(forms.Form):
    credits = CapField()


class SuspendForm(forms.Form):
    reason = forms.CharField(strip=True, max_length=300)


# --- Views ------------------------------------------------------------------------


def _page(request, *, status: int = 200):
    return render(request, "assistant/organization.html", {
        **shell_context(request), "page": organization_page(request.member),
        "providers": ProviderKey.Provider.choices, "max_instructions": INSTRUCTIONS_MAX_CHARS,
        "deployment_alert_percents": ", ".join(map(str, alert_percents(""))),
        "history_window": settings.HISTORY_WINDOW,
    }, status=status)


def _refused(request, text: str):
    messages.error(request, text)
    return _page(request, status=400)


@require_GET
@member_required
@with_csp
def organization(request):
    return _page(request)


class Refused(Exception):
    """An organization page action that can't be done: the page again, with why (400)."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text


def admin_action(view):
    """A form of the organization page: admins only; the view returns the text that
    says it was done (the page again, via a redirect) or raises Refused; a member
    of another organization is not found."""

    @require_POST
    @member_required
    @with_csp
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        admin_only(request.member)
        try:
            done = view(request, *args, **kwargs)
        except Membership.DoesNotExist:
            raise Http404("No such member.") from None
        except Refused as refusal:
            return _refused(request, refusal.text)
        messages.success(request, done)
        return redirect("web-organization")

    return wrapper


def _valid(form: forms.Form, refusal: str) -> dict:
    if not form.is_valid():
        raise Refused(refusal)
    return form.cleaned_data


MONTH = re.compile(r"\d{4}-(0[1-9]|1[0-2])")  # what the browser's month picker sends
CAP_REFUSED = gettext_lazy("A cap is a whole number of credits (or empty for none).")


@admin_action
def choose_model(request) -> str:
    refusal = _("That model is not among the ones this deployment allows.")
    try:
        model_choose(request.member, option_id=_valid(ModelForm(request.POST), refusal)["option"])
    except ModelNotAllowed:
        raise Refused(refusal) from None
    return _("The model was changed.")


@admin_action
def choose_member_models(request) -> str:
    chosen = _valid(MemberModelsForm(request.POST), _("Choose one of the rules."))
    member_models_set(request.member, rule=chosen["rule"])
    return _("The models members may choose were changed.")


@admin_action
def choose_history_mode(request) -> str:
    chosen = _valid(HistoryModeForm(request.POST), _("Choose one of the ways."))
    history_mode_set(request.member, mode=chosen["mode"])
    return _("What the assistant reads of long conversations was changed.")


@admin_action
def choose_untrusted_writes(request) -> str:
    chosen = _valid(UntrustedWritesForm(request.POST), _("Choose one of the ways."))
    untrusted_writes_set(request.member, mode=chosen["mode"])
    return _("What the assistant does with changes after reading outside content was changed.")


@admin_action
def choose_credit_alerts(request) -> str:
    try:
        credit_alert_percents_set(request.member, text=request.POST.get("percents", "")[:100])
    except InvalidThresholds:
        raise Refused(_("The thresholds are whole percentages from 1 to 100, at most five, or none for the "
                        "deployment's.")) from None
    return _("The credit alerts were changed.")


@admin_action
def save_instructions(request) -> str:
    form = InstructionsForm(request.POST)
    if not form.is_valid():  # a NUL (PostgreSQL text can't hold one): Django's own words for it
        raise Refused(" ".join(form.errors.get("instructions", [])))
    try:
        organization_instructions_set(request.member, text=request.POST.get("instructions", ""))
    except InstructionsTooLong:
        raise Refused(too_long()) from None
    return _("The instructions were saved.")


@admin_action
def save_key(request) -> str:
    data = _valid(KeyForm(request.POST), _("Choose a provider and paste its key."))
    try:
        key = provider_key_save(request.member, provider=data["provider"], plaintext=data["key"])
    except ProviderNotConfigured:
        # Never "refused": the provider was not asked.
        raise Refused(_("This server has no %(provider)s product configured: the key was not checked with the "
                        "provider, and not saved. Ask the server's operator.") % {
            "provider": ProviderKey.Provider(data["provider"]).label}) from None
    except KeyRefused as refusal:
        raise Refused(_("The provider refused this key (%(kind)s); it was not saved.") % {
            "kind": refusal.kind}) from None
    return _("The %(provider)s key %(hint)s was saved.") % {"provider": key.get_provider_display(), "hint": key.hint}


@admin_action
def remove_key(request, provider: str) -> str:
    # Only a provider's name reaches the query (a crafted one, with a NUL, failed on PostgreSQL).
    if provider not in ProviderKey.Provider.values or not provider_key_remove(request.member, provider=provider):
        raise Http404("No such key.")
    return _("The key was removed.")


@admin_action
def default_cap(request) -> str:
    credits = _valid(CapForm(request.POST), CAP_REFUSED)["credits"]
    default_cap_set_by_admin(request.member, credits=credits)
    return _("The default cap was changed.")


@admin_action
def member_cap(request, user_id: int) -> str:
    credits = _valid(CapForm(request.POST), CAP_REFUSED)["credits"]
    member_cap_set_by_admin(request.member, user_id=user_id, credits=credits)
    return _("The cap was changed.")


@admin_action
def suspend(request, user_id: int) -> str:
    reason = _valid(SuspendForm(request.POST), _("A suspension needs a reason."))["reason"]
    try:
        member_suspend(request.member, user_id=user_id, reason=reason)
    except CannotSuspendSelf:
        raise Refused(_("You can't suspend yourself.")) from None
    return _("The member was suspended.")


@admin_action
def restore(request, user_id: int) -> str:
    member_restore(request.member, user_id=user_id)
    return _("The suspension was lifted.")


@require_GET
@member_required
@with_csp
def usage_csv(request):
    """A month's usage per person, as CSV (the operators' usage export, for
    this organization): the month the page's picker chose, this one by default."""
    admin_only(request.member)
    month = request.GET.get("month") or current_month(timezone.now())
    if not MONTH.fullmatch(month):
        return JsonResponse({"code": "invalid_month", "detail": "month is YYYY-MM (UTC)."}, status=400)
    organization = Organization.objects.get(pk=request.member.organization_id)
    table = exports.usage_table(organization, month)
    return download_response(request, exports.stream(table, "csv"), content_type="text/csv; charset=utf-8",
                             filename=f"{table.name}.csv")

"""The page where a person creates (shown once) and revokes their API tokens
in the organization the page acts in. Thin: organizations/tokens.py does it."""

from uuid import UUID

from django import forms
from django.conf import settings
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from organizations import tokens
from web.members import member_required
from web.views import shell_context, with_csp

LIFETIMES = [(30, gettext_lazy("30 days")), (90, gettext_lazy("90 days")), (365, gettext_lazy("1 year"))]


class NewTokenForm(forms.Form):
    name = forms.CharField(max_length=80, required=False, label=gettext_lazy("Name (what uses it)"))
    days = forms.TypedChoiceField(choices=LIFETIMES, coerce=int, initial=settings.API_TOKEN_DAYS,
                                  label=gettext_lazy("Expires in"))


def _page(request, *, form=None, new_token: str = "", status: int = 200):
    return render(request, "web/tokens.html", {
        **shell_context(request),
        "form": form or NewTokenForm(initial={"days": 90}),
        "tokens": tokens.tokens_of(request.member),
        "new_token": new_token,
    }, status=status)


@require_GET
@member_required
@with_csp
def token_list(request):
    return _page(request)


@require_POST
@member_required
@with_csp
def token_create(request):
    form = NewTokenForm(request.POST)
    if not form.is_valid():
        return _page(request, form=form, status=400)
    try:
        _token, raw = tokens.create_token(request.member, days=form.cleaned_data["days"],
                                          name=form.cleaned_data["name"])
    except tokens.TooManyTokens:
        form.add_error(None, _("You already hold %(count)d tokens here: revoke one first.") % {
            "count": tokens.MAX_TOKENS_PER_PERSON})
        return _page(request, form=form, status=409)
    # Shown in this answer only: the database keeps its digest.
    response = _page(request, new_token=raw)
    response["Cache-Control"] = "no-store"
    return response


@require_POST
@member_required
@with_csp
def token_revoke(request, public_id: UUID):
    try:
        tokens.revoke_token(request.member, public_id)
    except tokens.TokenNotFound:
        raise Http404("No such token.") from None
    return redirect("web-tokens")

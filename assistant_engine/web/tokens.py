"""The page where a person creates (shown once) and revokes their API tokens
in the organization the page acts in. Thin: organizations/tokens.py does it.

A creation is POST, redirect, GET: reloading the page shows the list again and
never creates a second token. The new token crosses the redirect in the
person's session and is taken out of it by the GET that shows it."""

from uuid import UUID

from django import forms
from django.conf import settings
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from assistant_engine.foundation.paths import MCP_PATH
from assistant_engine.organizations import tokens
from assistant_engine.web.members import member_required
from assistant_engine.web.views import shell_context, with_csp

LIFETIMES = [(30, gettext_lazy("30 days")), (90, gettext_lazy("90 days")), (365, gettext_lazy("1 year"))]


class NewTokenForm(forms.Form):
    # A name says what holds the token, so that the person knows which one to revoke.
    name = forms.CharField(max_length=80, label=gettext_lazy("Name (what uses it)"),
                           error_messages={"required": gettext_lazy("Name it after what will use it.")})
    days = forms.TypedChoiceField(choices=LIFETIMES, coerce=int, initial=settings.API_TOKEN_DAYS,
                                  label=gettext_lazy("Expires in"))
    mcp_only = forms.BooleanField(
        required=False, label=gettext_lazy("For an MCP client only"),
        help_text=gettext_lazy("Accepted at /mcp only: the program that holds it can't use the API, so it can't "
                               "confirm the actions it proposes. Give an MCP client this kind."))


# The session key the new token crosses the redirect under (popped when shown).
NEW_TOKEN_KEY = "assistant_engine.web.new_api_token"  # noqa: S105 (a session key, not a secret)


def _page(request, *, form=None, new_token: str = "", status: int = 200):
    return render(request, "assistant/tokens.html", {
        **shell_context(request),
        "form": form or NewTokenForm(initial={"days": 90}),
        "tokens": tokens.tokens_of(request.member),
        "new_token": new_token,
        # Where an MCP client connects: beside the engine's pages, whatever prefix the product gave them.
        "mcp_url": request.build_absolute_uri(reverse("web-chat").rstrip("/") + MCP_PATH),
    }, status=status)


@require_GET
@member_required
@with_csp
def token_list(request):
    return _page(request, new_token=request.session.pop(NEW_TOKEN_KEY, ""))


@require_POST
@member_required
@with_csp
def token_create(request):
    form = NewTokenForm(request.POST)
    if not form.is_valid():
        return _page(request, form=form, status=400)
    try:
        _token, raw = tokens.create_token(request.member, days=form.cleaned_data["days"],
                                          name=form.cleaned_data["name"], mcp_only=form.cleaned_data["mcp_only"])
    except tokens.TooManyTokens:
        form.add_error(None, _("You already hold %(count)d tokens here: revoke one first.") % {
            "count": tokens.MAX_TOKENS_PER_PERSON})
        return _page(request, form=form, status=409)
    # Shown by the next GET only (then gone from the session): the database keeps its digest.
    request.session[NEW_TOKEN_KEY] = raw
    return redirect("web-tokens")


@require_http_methods(["GET", "POST"])
@member_required
@with_csp
def token_revoke(request, public_id: UUID):
    """GET asks first (a page naming the token), POST revokes."""
    try:
        if request.method == "GET":
            return render(request, "assistant/token_revoke.html", {
                **shell_context(request), "token": tokens.token_of(request.member, public_id)})
        tokens.revoke_token(request.member, public_id)
    except tokens.TokenNotFound:
        raise Http404("No such token.") from None
    return redirect("web-tokens")

"""The person's instructions page (their own, in the organization the page
acts in; the organization's shown beside them). Thin: organizations.instructions
bounds and writes them; the assistant adds them to every turn's system prompt."""

from django import forms
from django.contrib import messages
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from assistant_engine.organizations.instructions import (
    INSTRUCTIONS_MAX_CHARS,
    InstructionsTooLong,
    instructions_get,
    my_instructions_set,
)
from assistant_engine.web.members import member_required
from assistant_engine.web.views import shell_context, with_csp


class InstructionsForm(forms.Form):
    # The bound is the service's (line endings counted once); the browser's maxlength helps before it.
    instructions = forms.CharField(
        required=False, strip=False, label=gettext_lazy("Your instructions"),
        widget=forms.Textarea(attrs={"rows": 8, "maxlength": INSTRUCTIONS_MAX_CHARS,
                                     "aria-describedby": "instructions-bound"}),
    )


def too_long() -> str:
    return _("Instructions are limited to %(count)s characters.") % {"count": f"{INSTRUCTIONS_MAX_CHARS:,}"}


@require_http_methods(["GET", "POST"])
@member_required
@with_csp
def instructions_page(request):
    current = instructions_get(request.member)
    form = InstructionsForm(request.POST if request.method == "POST" else {"instructions": current.person})
    status = 200
    # The form refuses a NUL (PostgreSQL text can't hold one), with its error; the service bounds the length.
    if request.method == "POST" and not form.is_valid():
        status = 400
    elif request.method == "POST":
        try:
            my_instructions_set(request.member, text=form.data.get("instructions", ""))
        except InstructionsTooLong:
            form.add_error("instructions", too_long())
            status = 400
        else:
            messages.success(request, _("Your instructions were saved."))
            return redirect("web-instructions")
    return render(request, "assistant/instructions.html", {
        **shell_context(request), "form": form, "organization_instructions": current.organization,
        "max_chars": INSTRUCTIONS_MAX_CHARS, "can_set_organization": request.member.is_admin,
    }, status=status)

"""The browser page that links a Telegram account to the person's membership.

A page of the browser UI (web's door, shell and headers) over the Telegram
surface's linking services: the one import of `surfaces` from `web`, declared
in pyproject.toml's import contracts. Its template stays with the surface
(`surfaces/telegram/templates/telegram/link.html`).
"""

from django.conf import settings
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from assistant_engine.surfaces.telegram import linking
from assistant_engine.web.members import member_required
from assistant_engine.web.views import shell_context, with_csp


@require_http_methods(["GET", "POST"])
@member_required
@with_csp
def link_page(request):
    """Shows the link; POST `action=code` issues a one-time code (shown once),
    `action=unlink` removes the link."""
    member = request.member
    issued = None
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "code":
            issued = linking.link_code_create(member)
        elif action == "unlink":
            linking.link_remove(member)
            return redirect("telegram-link")
        else:
            return render(request, "telegram/link.html", {**shell_context(request), "error": True}, status=400)
    return render(request, "telegram/link.html", {
        **shell_context(request),
        "enabled": bool(settings.TELEGRAM_BOT_TOKEN),
        "link": linking.link_for_member(member),
        "issued": issued,
        "minutes": settings.TELEGRAM_LINK_CODE_MINUTES,
    })

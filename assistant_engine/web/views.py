"""The browser pages: thin views over the selectors; the page's script talks to
the REST API for everything that writes (chat, delete, cards) and fetches the
fragments below to show what the server stored."""

from functools import wraps
from urllib.parse import urlsplit
from uuid import UUID

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods

from assistant.page_shell import shell_context
from assistant_engine.organizations.api import SESSION_ORGANIZATION_KEY
from assistant_engine.organizations.members import memberships_of
from assistant_engine.providers.org_models import member_options, rule_of
from assistant_engine.web import selectors
from assistant_engine.web.language import LoginView
from assistant_engine.web.members import member_required
from assistant_engine.web.outbound import destination
from conversations.selectors import ConversationNotFound

EXAMPLES = [
    gettext_lazy("Search my notes for budget"),
    gettext_lazy("Read my inbox"),
    gettext_lazy("Create a note titled Groceries: milk, eggs and bread"),
    gettext_lazy("Delete the note Groceries"),
]

PROCESSING_DETAILS = {
    "local": gettext_lazy("The offline demo model runs inside this application, on this server: your messages "
                          "are not sent to any model provider."),
    "CH": gettext_lazy("Infomaniak AI Services, in Switzerland, processes each conversation to write the replies."),
    "EU": gettext_lazy("Claude, through Amazon Bedrock in the European Union (an EU inference profile), processes "
                       "each conversation to write the replies."),
    "US": gettext_lazy("Anthropic, in the United States, processes each conversation to write the replies. This "
                       "deployment was explicitly allowed to send data there."),
}


def with_csp(view):
    # The Content-Security-Policy itself is the whole site's (CONTENT_SECURITY_POLICY
    # in config/settings.py, django-csp): a third layer behind escaping and sanitizing.
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        response.headers.setdefault("Referrer-Policy", "same-origin")
        return response

    return wrapper


@require_GET
@member_required
@with_csp
def chat(request, conversation_id: UUID | None = None):
    page = None
    if conversation_id is not None:
        try:
            page = selectors.conversation_page(request.member, conversation_id)
        except ConversationNotFound:
            raise Http404("No such conversation.") from None
    return render(request, "assistant/chat.html", {
        **shell_context(request),
        "page": page,
        "sidebar": selectors.sidebar(request.member, current_id=str(conversation_id or "")),
        "current_id": str(conversation_id or ""),
        "examples": EXAMPLES,
        "model_options": model_menu(request.member),
        "service_down_seconds": settings.SERVICE_DOWN_SECONDS,
    })


def model_menu(member) -> list:
    """The chat's model menu: shown only when a member has more than the organization's own model to pick."""
    options = member_options(member.organization_id, rule_of(member))
    return options if len(options) > 1 else []


@require_GET
@member_required(fragment=True)
@with_csp
def conversation_messages(request, conversation_id: UUID):
    try:
        page = selectors.conversation_page(request.member, conversation_id)
    except ConversationNotFound:
        raise Http404("No such conversation.") from None
    return render(request, "assistant/_messages.html", {"page": page})


@require_GET
@member_required(fragment=True)
@with_csp
def sidebar_list(request):
    try:
        pages = min(max(int(request.GET.get("pages", "1")), 1), 100)
    except ValueError:
        pages = 1
    current_id = request.GET.get("current", "")
    return render(request, "assistant/_sidebar_list.html", {
        "sidebar": selectors.sidebar(request.member, pages=pages, query=request.GET.get("q", ""),
                                     current_id=current_id),
        "current_id": current_id,
        "query": request.GET.get("q", "").strip(),
    })


@require_GET
@member_required(fragment=True)
@with_csp
def card(request, card_id: UUID):
    try:
        view = selectors.card_for_member(request.member, card_id)
    except selectors.CardNotFound:
        raise Http404("No such card.") from None
    return render(request, "assistant/_card.html", {"card": view})


@require_GET
@member_required
@with_csp
def data(request):
    context = shell_context(request)
    location = context["processing"]["location"]
    return render(request, "assistant/data.html", {
        **context,
        "processing_detail": PROCESSING_DETAILS.get(location, _("No model is configured, so nothing is processed.")),
        "idle_days": settings.ASSISTANT_IDLE_PURGE_DAYS,
        "card_hours": selectors.card_lifetime_hours(),
        "export_url": reverse("me-export"),
        "staff_accesses": selectors.staff_access_list(request.member),
    })


@require_GET
@login_required
@with_csp
def outbound(request):
    """The whole destination of a link the assistant wrote, before the person goes there (web/outbound.py)."""
    url = destination(request.GET.get("to", ""))
    if url is None:
        raise Http404("No such link.")
    parts = urlsplit(url)
    return render(request, "assistant/outbound.html", {"url": url, "host": parts.hostname or "",
                                                        "has_query": bool(parts.query)})


@require_http_methods(["GET", "POST"])
@login_required
@with_csp
def organizations(request):
    """Choose the organization the pages act in (kept in the session)."""
    memberships = memberships_of(request.user)
    if not memberships:
        return render(request, "assistant/no_organization.html", status=403)
    next_url = request.POST.get("next") or request.GET.get("next") or ""
    if not url_has_allowed_host_and_scheme(next_url, {request.get_host()}, require_https=request.is_secure()):
        next_url = ""
    if request.method == "POST":
        chosen = next((m for m in memberships if m.organization.slug == request.POST.get("organization")), None)
        if chosen is None:
            raise Http404("No such organization among yours.")
        previous = request.session.get(SESSION_ORGANIZATION_KEY)
        request.session[SESSION_ORGANIZATION_KEY] = chosen.organization.slug
        # An open conversation belongs to the previous organization: start afresh.
        if previous and previous != chosen.organization.slug:
            next_url = ""
        return redirect(next_url or reverse("web-chat"))
    return render(request, "assistant/organizations.html", {
        "memberships": memberships,
        "current": request.session.get(SESSION_ORGANIZATION_KEY, ""),
        "next": next_url,
    })


login = with_csp(LoginView.as_view(
    template_name="registration/login.html",
    redirect_authenticated_user=True,
))
logout = auth_views.LogoutView.as_view(next_page=reverse_lazy("login"))

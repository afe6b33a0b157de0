"""The assistant panel of host pages: its state, kept in the session, and the
conversation it shows.

The server holds the truth: which conversation the panel shows and whether it
is open live in the person's session (per organization), the conversation in
the database; a page renders the panel as it was, so navigating or reloading
loses nothing and resends nothing. The draft stays in the browser (chat.js).
"""

import json
from uuid import UUID

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from assistant.page_context import ContextNotFound, UnknownContextKind, resolve_page_context
from assistant.page_shell import shell_context
from assistant_engine.organizations.members import Member
from assistant_engine.organizations.pages import member_required
from assistant_engine.web import selectors
from assistant_engine.web.views import EXAMPLES  # the chat page's examples, in the panel's welcome too
from conversations.selectors import ConversationNotFound, thread_get_for_member

SESSION_KEY = "assistant_panel"


def _state(request, member: Member) -> dict:
    states = request.session.get(SESSION_KEY, {})
    return states.get(member.organization_slug, {}) if isinstance(states, dict) else {}


def _save(request, member: Member, state: dict) -> None:
    states = request.session.get(SESSION_KEY, {})
    states = states if isinstance(states, dict) else {}
    states[member.organization_slug] = state
    request.session[SESSION_KEY] = states


def panel_context(request, member: Member, *, context_kind: str = "", context_id: str = "") -> dict:
    """What templates/web/_panel.html needs: open or not, the conversation (or
    none: a new one), and what the host page has open, checked with the person's rights."""
    state = _state(request, member)
    page = None
    if state.get("conversation"):
        try:
            page = selectors.conversation_page(member, UUID(state["conversation"]))
        except (ConversationNotFound, ValueError):
            _save(request, member, {**state, "conversation": ""})  # deleted meanwhile: a new one
    looking_at = None
    if context_kind:
        try:
            looking_at = resolve_page_context(member, kind=context_kind, object_id=str(context_id))
        except (UnknownContextKind, ContextNotFound):
            looking_at = None  # not the person's: the panel is told nothing
    return {
        "panel_open": bool(state.get("open")),
        "page": page,
        "current_id": str(page.thread.id) if page else "",
        "examples": EXAMPLES,
        "looking_at": looking_at,
        "state_url": reverse("web-panel-state"),
        "chat_url": reverse("web-panel-chat"),
        "service_down_seconds": settings.SERVICE_DOWN_SECONDS,
    }


@require_POST
@member_required(fragment=True)
def panel_state(request):
    """POST {open?: bool, conversationId?: uuid | null}: 204; 400 on a bad body, 404 for a conversation not theirs."""
    try:
        body = json.loads(request.body or b"{}")
    except ValueError:
        return JsonResponse({"code": "malformed_json", "detail": "The body is not JSON."}, status=400)
    if not isinstance(body, dict) or set(body) - {"open", "conversationId"}:
        return JsonResponse({"code": "invalid", "detail": "Only open and conversationId."}, status=400)
    state = _state(request, request.member)
    if "open" in body:
        if not isinstance(body["open"], bool):
            return JsonResponse({"code": "invalid", "detail": "open is true or false."}, status=400)
        state = {**state, "open": body["open"]}
    if "conversationId" in body:
        conversation = body["conversationId"] or ""
        if conversation:
            try:
                thread_get_for_member(request.member, UUID(str(conversation)))
            except (ConversationNotFound, ValueError):
                return JsonResponse({"code": "not_found", "detail": "No such conversation."}, status=404)
        state = {**state, "conversation": str(conversation)}
    _save(request, request.member, state)
    return HttpResponse(status=204)


@require_GET
@member_required(fragment=True)
def panel_chat(request):
    """The panel's <assistant-chat> for its current conversation (after "New conversation")."""
    return render(request, "assistant/_panel_chat.html", {
        **shell_context(request), **panel_context(request, request.member),
    })

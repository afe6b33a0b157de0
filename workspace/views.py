"""The host product's own pages: notes (list, open, create, edit, delete), the
inbox and the sent mail. Thin views over workspace's selectors and services,
behind the same browser door as every page (organizations/pages.py); each page
carries the assistant panel ({% assistant_panel %} in templates/workspace/base.html).

Another person's note is 404, as everywhere.
"""

from django import forms
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from assistant.page_shell import shell_context
from assistant_engine.organizations.pages import member_required
from workspace import selectors, services
from workspace.models import Note

MAX_ID = 2**63 - 1


class NoteForm(forms.Form):
    title = forms.CharField(label=_("Title"), max_length=200)
    body = forms.CharField(label=_("Text"), max_length=50_000, required=False, widget=forms.Textarea(attrs={"rows": 8}))


def _page(request, template: str, context: dict, status: int = 200):
    return render(request, f"workspace/{template}", {**shell_context(request), **context}, status=status)


def _own_note(request, note_id: int) -> Note:
    if note_id > MAX_ID:  # past a bigint: no such note (the database would refuse the number)
        raise Http404("No such note.")
    try:
        return selectors.note_get(request.member, note_id)
    except Note.DoesNotExist:
        raise Http404("No such note.") from None


@require_http_methods(["GET", "POST"])
@member_required
def notes(request):
    form = NoteForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        note = services.note_create(request.member, **form.cleaned_data)
        return redirect("workspace-note", note_id=note.id)
    status = 400 if form.errors else 200
    return _page(request, "notes.html", {
        "notes": selectors.note_search(request.member, "", limit=200), "form": form, "section": "notes",
    }, status=status)


@require_http_methods(["GET", "POST"])
@member_required
def note(request, note_id: int):
    current = _own_note(request, note_id)
    form = NoteForm(request.POST or None, initial={"title": current.title, "body": current.body})
    if request.method == "POST" and form.is_valid():
        try:
            services.note_update(request.member, note_id=current.id, **form.cleaned_data)
        except Note.DoesNotExist:
            raise Http404("No such note.") from None
        return redirect("workspace-note", note_id=current.id)
    return _page(request, "note.html", {"note": current, "form": form, "section": "notes"},
                 status=400 if form.errors else 200)


@require_POST
@member_required
def note_delete(request, note_id: int):
    _own_note(request, note_id)
    try:
        services.note_delete(request.member, note_id=note_id)
    except Note.DoesNotExist:
        raise Http404("No such note.") from None
    return redirect("workspace-notes")


@require_GET
@member_required
def inbox(request):
    return _page(request, "inbox.html", {
        "messages_received": selectors.inbox_list(request.member, selectors.INBOX_MAX_LIMIT), "section": "inbox",
    })


@require_GET
@member_required
def sent(request):
    return _page(request, "sent.html", {"sent": selectors.sent_list(request.member), "section": "sent"})

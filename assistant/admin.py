"""Staff look into confirmation cards and turns read-only (a card is decided
only by its person's click or by the expiry sweep, a turn is written by its
worker), and export or erase a person's data.

Opening a card or a turn, exporting a person and starting an erasure are
recorded in the staff access log (organizations.access_log); the thread page
of the conversations admin shows the thread's cards (added from here: the
conversations app can't import the cards)."""

import json
from uuid import UUID

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.exceptions import NotRegistered
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import Q
from django.http import HttpResponse, HttpResponseRedirect
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html

from assistant.admin_exports import exports_view
from assistant.maintenance import erasure_start
from assistant.models import ActionCard, Erasure, Turn
from assistant_engine.foundation.admin import ScaledChangeList, ViewOnlyAdminMixin, listed_filter
from assistant_engine.organizations.access_log import Kind, staff_access_record_person
from assistant_engine.organizations.admin import RecordsStaffAccess
from assistant_engine.organizations.personal_data import EXPORT_FORMAT, export_person
from assistant_engine.providers.catalog import CATALOG
from assistant_engine.tools.registry import all_tools
from conversations.models import Thread


def card_tool_names() -> list[str]:
    return [tool.name for tool in all_tools() if tool.tool_class in ("confirm", "send")]


@admin.register(ActionCard)
class ActionCardAdmin(ScaledChangeList, RecordsStaffAccess, ViewOnlyAdminMixin, admin.ModelAdmin):
    list_display = [
        "id", "tool_name", "status", "trifecta_warning", "organization", "user", "created_at", "expires_at",
        "decided_at",
    ]
    list_filter = ["status", listed_filter("tool_name", "tool", card_tool_names), "trifecta_warning"]
    list_select_related = ["organization", "user"]
    search_fields = ["tool_name"]
    search_help_text = "A card, conversation or turn id (exact), or a tool name."
    ordering = ["-created_at"]
    readonly_fields = [field.name for field in ActionCard._meta.fields]
    staff_access_kind = Kind.CARD

    def get_search_results(self, request, queryset, search_term):
        # An id is matched exactly as a UUID: the text form of a UUID column
        # differs between SQLite and PostgreSQL, so no "contains" on it.
        try:
            wanted = UUID(search_term.strip())
        except ValueError:
            return super().get_search_results(request, queryset, search_term)
        return queryset.filter(Q(id=wanted) | Q(thread_id=wanted) | Q(turn_id=wanted)), False


# --- Turns: failed ones looked into, read-only ------------------------------------


@admin.register(Turn)
class TurnAdmin(ScaledChangeList, RecordsStaffAccess, ViewOnlyAdminMixin, admin.ModelAdmin):
    list_display = [
        "id", "conversation", "organization", "status", "failure_kind", "model_option", "steps", "tool_calls",
        "input_tokens", "output_tokens", "reserved_micros", "cost_micros", "credit_month", "created_at",
        "finished_at",
    ]
    list_filter = ["status", "failure_kind",
                   listed_filter("model_option", "model option", lambda: [option.id for option in CATALOG])]
    list_select_related = ["organization"]
    search_fields = ["=organization__slug"]
    search_help_text = "A turn or conversation id (exact), or an organization's slug."
    ordering = ["-created_at"]
    fields = [
        "id", "conversation", "organization", "user", "model_option", "key_source", "status", "failure_kind", "steps",
        "tool_calls", "input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens", "credit_month",
        "reserved_micros", "cost_micros", "read_private", "read_untrusted", "enqueue_attempts", "created_at",
        "requeued_at", "started_at", "finished_at",
    ]
    readonly_fields = fields
    staff_access_kind = Kind.TURN

    def get_urls(self):
        exports_page = self.admin_site.admin_view(lambda request: exports_view(self.admin_site, request))
        return [path("exports/", exports_page, name="assistant_exports"), *super().get_urls()]

    @admin.display(description="conversation")
    def conversation(self, turn):
        if turn.thread_id is None:  # deleted since
            return "—"
        url = reverse("admin:conversations_thread_change", args=[turn.thread_id])
        return format_html('<a href="{}">{}</a>', url, turn.thread_id)

    def get_search_results(self, request, queryset, search_term):
        # Exact UUIDs, as for the cards.
        try:
            wanted = UUID(search_term.strip())
        except ValueError:
            return super().get_search_results(request, queryset, search_term)
        return queryset.filter(Q(id=wanted) | Q(thread_id=wanted)), False


# --- A person's data: export (download) and erasure (batched, in a worker) --------

# Created by migration 0003 on the Erasure content type; superusers have it.
EXPORT_PERMISSION = "assistant.export_personal_data"


def check_erasure_request(*, requester, person) -> None:
    """Raise ValidationError unless `requester` may erase `person` (nothing written yet).

    An erasure deletes the account, so it takes the right to delete users on
    top of adding erasures; staff accounts are erased by a superuser only,
    and nobody erases their own account here.
    """
    if not requester.has_perm("auth.delete_user"):
        raise ValidationError("Erasing a person deletes their account: you need the permission to delete users.")
    if person.pk == requester.pk:
        raise ValidationError("You can't erase your own account.")
    if (person.is_superuser or person.is_staff) and not requester.is_superuser:
        raise ValidationError("Only a superuser can erase a staff member or a superuser.")


class ErasureForm(forms.ModelForm):
    # Who asks: set on the form class by ErasureAdmin.get_form, per request.
    requester = None

    confirm = forms.BooleanField(
        label="I understand", help_text="The person's conversations, cards, notes and mail, their memberships and "
        "their account are deleted for good. Turns and the ledger keep their costs, without the person.",
    )

    class Meta:
        model = Erasure
        fields = ["user"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "user" in self.fields:  # the add form (a started erasure is only viewed)
            self.fields["user"].required = True

    def clean_user(self):
        person = self.cleaned_data["user"]
        check_erasure_request(requester=self.requester, person=person)
        return person


@admin.register(Erasure)
class ErasureAdmin(admin.ModelAdmin):
    form = ErasureForm
    list_display = ["id", "subject_id", "status", "batches", "blocked_by", "requested_by", "created_at",
                    "finished_at"]
    list_filter = ["status"]
    ordering = ["-created_at"]
    raw_id_fields = ["user"]
    readonly_fields = ["subject_id", "status", "batches", "counts", "blocked_by", "requested_by", "created_at",
                       "updated_at", "finished_at"]

    def get_fields(self, request, obj=None):
        return ["user", "confirm"] if obj is None else self.readonly_fields

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        form.requester = request.user  # a class made for this request by modelform_factory
        return form

    def has_add_permission(self, request):
        return super().has_add_permission(request) and request.user.has_perm("auth.delete_user")

    def save_model(self, request, obj, form, change):
        # Not a plain save: erasure_start closes the person's access and queues the batches.
        person = form.cleaned_data["user"]
        started = erasure_start(person, requested_by=request.user)
        staff_access_record_person(staff=request.user, kind=Kind.ERASURE, person=person, object_id=started.pk,
                                   path=request.get_full_path())
        obj.pk, obj.subject_id, obj.status = started.pk, started.subject_id, started.status

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


def has_export_personal_data_permission(request) -> bool:
    return request.user.has_perm(EXPORT_PERMISSION)


@admin.action(description="Download the personal data export (JSON)", permissions=["export_personal_data"])
def export_personal_data(modeladmin, request, queryset):
    # The admin offers the action only with the permission; checked again for
    # any other caller, since viewing users is not enough to read their data.
    if not has_export_personal_data_permission(request):
        raise PermissionDenied
    people = list(queryset.order_by("pk"))
    if any(person.is_staff or person.is_superuser for person in people) and not request.user.is_superuser:
        modeladmin.message_user(request, "Only a superuser can export a staff member's or a superuser's data.",
                                level=messages.ERROR)
        return None
    for person in people:
        staff_access_record_person(staff=request.user, kind=Kind.EXPORT, person=person,
                                   path=request.get_full_path())
    exported = [{"userId": person.pk, "organizations": export_person(person)} for person in people]
    response = HttpResponse(
        json.dumps({"format": EXPORT_FORMAT, "people": exported}, cls=DjangoJSONEncoder, indent=2),
        content_type="application/json",
    )
    response["Content-Disposition"] = f'attachment; filename="personal-data-{timezone.now():%Y%m%d-%H%M}.json"'
    return response


@admin.action(description="Erase the personal data…", permissions=["delete"])
def erase_personal_data(modeladmin, request, queryset):
    if queryset.count() != 1:
        modeladmin.message_user(request, "Erase one person at a time.", level=messages.WARNING)
        return None
    # To the erasure form, which asks for a confirmation.
    return HttpResponseRedirect(f"{reverse('admin:assistant_erasure_add')}?user={queryset.get().pk}")


# --- The thread page: its cards and their outcome ----------------------------------


class ThreadCardInline(ViewOnlyAdminMixin, admin.TabularInline):
    """The thread's cards on its page, oldest first, with what came of them."""

    model = ActionCard
    fk_name = "thread"
    fields = ["tool_name", "description", "status", "trifecta_warning", "outcome", "created_at", "decided_at"]
    readonly_fields = fields
    ordering = ["created_at", "id"]
    extra = 0
    can_delete = False
    verbose_name_plural = "confirmation cards"

    @admin.display(description="outcome")
    def outcome(self, card):
        if card.error:
            return card.error
        if card.result is None:
            return "—"
        return json.dumps(card.result, ensure_ascii=False, sort_keys=True)

    def has_view_permission(self, request, obj=None):
        # Part of the conversation, like its messages.
        return request.user.has_perm("conversations.view_thread")


def _add_thread_cards() -> None:
    thread_admin = admin.site.get_model_admin(Thread)
    if ThreadCardInline not in thread_admin.inlines:
        thread_admin.inlines = [*thread_admin.inlines, ThreadCardInline]


def _add_user_actions() -> None:
    """Offer both actions on the users' admin, whoever registered it."""
    try:
        user_admin = admin.site.get_model_admin(get_user_model())
    except NotRegistered:
        return
    actions = list(user_admin.actions or [])
    user_admin.actions = [*actions, *(a for a in (export_personal_data, erase_personal_data) if a not in actions)]
    # What permissions=["export_personal_data"] asks the user admin for.
    user_admin.has_export_personal_data_permission = has_export_personal_data_permission


_add_user_actions()
_add_thread_cards()

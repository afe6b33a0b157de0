"""Staff look into confirmation cards read-only: a card is decided only by
its person's click or by the expiry sweep, never edited by hand."""

from uuid import UUID

from django.contrib import admin
from django.db.models import Q

from assistant.models import ActionCard


@admin.register(ActionCard)
class ActionCardAdmin(admin.ModelAdmin):
    list_display = [
        "id", "tool_name", "status", "trifecta_warning", "organization", "user", "created_at", "expires_at",
        "decided_at",
    ]
    list_filter = ["status", "tool_name", "trifecta_warning"]
    list_select_related = ["organization", "user"]
    search_fields = ["tool_name"]
    search_help_text = "A card, conversation or turn id (exact), or a tool name."
    ordering = ["-created_at"]
    readonly_fields = [field.name for field in ActionCard._meta.fields]

    def get_search_results(self, request, queryset, search_term):
        # An id is matched exactly as a UUID: the text form of a UUID column
        # differs between SQLite and PostgreSQL, so no "contains" on it.
        try:
            wanted = UUID(search_term.strip())
        except ValueError:
            return super().get_search_results(request, queryset, search_term)
        return queryset.filter(Q(id=wanted) | Q(thread_id=wanted) | Q(turn_id=wanted)), False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

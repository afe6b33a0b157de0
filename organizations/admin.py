from django.contrib import admin

from organizations.access_log import staff_access_record
from organizations.models import ApiToken, Membership, Organization, StaffAccess


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "monthly_credits", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "organization", "role", "created_at"]
    list_filter = ["role", "organization"]
    search_fields = ["user__username", "organization__slug"]
    autocomplete_fields = ["user", "organization"]


@admin.register(StaffAccess)
class StaffAccessAdmin(admin.ModelAdmin):
    """The staff access log, for superusers only, read-only: a trace that staff
    could edit or delete would prove nothing (the retention job deletes old rows)."""

    list_display = ["at", "staff_username", "kind", "object_id", "person", "organization", "path"]
    list_filter = ["kind", "organization"]
    list_select_related = ["person", "organization"]
    search_fields = ["=staff_username", "=person__username", "=object_id"]
    search_help_text = "A staff member's or a person's username, or an object id (exact)."
    ordering = ["-at", "-id"]
    date_hierarchy = "at"
    fields = ["at", "staff", "staff_username", "person", "organization", "kind", "object_id", "path"]
    readonly_fields = fields

    def has_module_permission(self, request):
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Staff see who holds which token and may revoke one (delete); never the
    token nor its first characters (`token_key`). The digest, the primary key,
    appears in URLs: it can't be turned back into the token. Tokens are created
    by their owner (tokens page, create_token)."""

    list_display = ["public_id", "user", "organization", "name", "created", "expiry"]
    list_filter = ["organization"]
    list_select_related = ["user", "organization"]
    search_fields = ["user__username", "organization__slug"]
    fields = ["public_id", "user", "organization", "name", "created", "expiry"]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class RecordsStaffAccess:
    """For the admin of a person's objects: opening one (its change page)
    writes a row to the staff access log; the list page writes nothing.

    Set `staff_access_kind`; `staff_access_owner(obj)` says whose data it is
    (the object's `user_id` and `organization_id` by default)."""

    staff_access_kind: str

    def staff_access_owner(self, obj) -> tuple[int | None, int | None]:
        return obj.user_id, obj.organization_id

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        # Rendered only for a page shown (GET): staff may not change these objects.
        if obj is not None and not add:
            person_id, organization_id = self.staff_access_owner(obj)
            staff_access_record(
                staff=request.user, kind=self.staff_access_kind, person_id=person_id,
                organization_id=organization_id, object_id=obj.pk, path=request.get_full_path(),
            )
        return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)

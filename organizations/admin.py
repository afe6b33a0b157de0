from django.contrib import admin

from organizations.models import ApiToken, Membership, Organization


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

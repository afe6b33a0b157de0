import functools

from django import forms
from django.conf import settings
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.db import transaction

from assistant_engine.foundation.admin import ScaledChangeList, chosen_only_filter, drill_down
from assistant_engine.foundation.people import login_field
from assistant_engine.organizations.access_log import staff_access_record, staff_accesses_record_listed
from assistant_engine.organizations.models import ApiToken, Membership, Organization, OrganizationChange, StaffAccess
from assistant_engine.organizations.services import change_record, membership_lift, membership_suspend


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]
    # Caps and suspensions are changed on the membership's own page, where
    # each change goes through the services that record it.
    fields = ["user", "role", "monthly_cap_credits", "suspended_at"]
    readonly_fields = ["monthly_cap_credits", "suspended_at"]


class OrganizationChangeInline(admin.TabularInline):
    """The organization's change log (who, what, when), read-only."""

    model = OrganizationChange
    extra = 0
    fields = ["at", "actor_username", "action", "detail"]
    readonly_fields = fields
    can_delete = False
    ordering = ["-at", "-id"]

    def has_add_permission(self, request, obj=None):
        return False


# The people's login field (`username`, or a product's `email`): what staff search them by.
LOGIN = login_field()


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "monthly_credits", "model_option", "default_member_cap_credits", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline, OrganizationChangeInline]
    # The model is checked against the catalog and the residency rules, which
    # this app can't import: its admins choose it, and the models members may
    # pick, and what the model is sent of long conversations, on the
    # organization page (each change in its change log).
    readonly_fields = ["model_option", "member_models", "history_mode", "untrusted_writes"]

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if change and "default_member_cap_credits" in form.changed_data:
            cap = obj.default_member_cap_credits
            change_record(organization_id=obj.pk, actor_id=request.user.pk, action=OrganizationChange.Kind.DEFAULT_CAP,
                          detail="no cap" if cap is None else f"{cap} credits")


class MembershipForm(forms.ModelForm):
    suspended = forms.BooleanField(
        required=False, help_text="A suspended member's requests in this organization are refused (403); "
        "a running turn finishes; their data stays.",
    )

    class Meta:
        model = Membership
        fields = ["user", "organization", "role", "monthly_cap_credits", "suspended", "suspended_reason"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["suspended"].initial = self.instance.is_suspended

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("suspended") and not (cleaned.get("suspended_reason") or "").strip():
            self.add_error("suspended_reason", "A suspension needs a reason.")
        return cleaned


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    form = MembershipForm
    list_display = ["user", "organization", "role", "monthly_cap_credits", "suspended_at", "created_at"]
    list_filter = ["role", "organization"]
    search_fields = [f"user__{LOGIN}", "organization__slug"]
    autocomplete_fields = ["user", "organization"]

    def save_model(self, request, obj, form, change):
        """Suspending and lifting go through the services, which record the change."""
        suspend = form.cleaned_data.get("suspended")
        was_suspended = change and Membership.objects.filter(pk=obj.pk, suspended_at__isnull=False).exists()
        reason = obj.suspended_reason
        if not suspend:
            obj.suspended_reason = ""
        super().save_model(request, obj, form, change)
        if suspend and not was_suspended:
            membership_suspend(membership=obj, reason=reason, actor_id=request.user.pk)
        elif was_suspended and not suspend:
            membership_lift(membership=obj, actor_id=request.user.pk)
        if change and "monthly_cap_credits" in form.changed_data:
            cap = obj.monthly_cap_credits
            change_record(organization_id=obj.organization_id, actor_id=request.user.pk,
                          action=OrganizationChange.Kind.MEMBER_CAP,
                          detail=f"{obj.user.get_username()}: {'no cap' if cap is None else f'{cap} credits'}")


@admin.register(StaffAccess)
class StaffAccessAdmin(ScaledChangeList, admin.ModelAdmin):
    """The staff access log, for superusers only, read-only: a trace that staff
    could edit or delete would prove nothing (the retention job deletes old rows).
    Its cost is the page's, not the log's (issue 36.5): the estimated count, an
    organization filter of the chosen one only, the drill-down by index probes."""

    list_display = ["at", "staff_username", "kind", "object_id", "person", "organization", "path"]
    list_filter = ["kind", chosen_only_filter("organization", "organization")]
    list_select_related = ["person", "organization"]
    search_fields = ["=staff_username", f"=person__{LOGIN}", "=object_id"]
    search_help_text = "A staff member's or a person's username, or an object id (exact)."
    ordering = ["-at", "-id"]
    date_hierarchy = "at"
    fields = ["at", "staff", "staff_username", "person", "organization", "kind", "object_id", "path"]
    readonly_fields = fields

    def get_queryset(self, request):
        return drill_down(super().get_queryset(request))

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
    search_fields = [f"user__{LOGIN}", "organization__slug"]
    fields = ["public_id", "user", "organization", "name", "created", "expiry"]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class RecordsStaffAccess:
    """For the admin of a person's objects: each page that shows one (its
    change page, its history, the confirmation of its deletion) writes a row
    to the staff access log, and a list page one row per person whose objects
    it shows (without an object id: titles and names were seen, no object
    opened), in one INSERT.

    Set `staff_access_kind`; `staff_access_owner(obj)` says whose data it is
    (the object's `user_id` and `organization_id` by default). A test
    (tests/admin/test_staff_access_everywhere.py) fails for any registered
    admin over a model that belongs to a person without this mixin."""

    staff_access_kind: str

    def staff_access_owner(self, obj) -> tuple[int | None, int | None]:
        return obj.user_id, obj.organization_id

    def staff_access_owners(self, objs) -> set[tuple[int | None, int | None]]:
        """The (person, organization) pairs whose data these objects show."""
        return {self.staff_access_owner(obj) for obj in objs}

    def _record_staff_access(self, request, obj) -> None:
        for person_id, organization_id in sorted(self.staff_access_owners([obj]), key=str):
            staff_access_record(
                staff=request.user, kind=self.staff_access_kind, person_id=person_id,
                organization_id=organization_id, object_id=obj.pk, path=request.get_full_path(),
            )

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        # Rendered for a page shown (a GET, or a POST refused and shown again).
        if obj is not None and not add:
            self._record_staff_access(request, obj)
        return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)

    def history_view(self, request, object_id, extra_context=None):
        response = super().history_view(request, object_id, extra_context)
        self._record_shown(request, response)
        return response

    def delete_view(self, request, object_id, extra_context=None):
        response = super().delete_view(request, object_id, extra_context)
        self._record_shown(request, response)
        return response

    def changelist_view(self, request, extra_context=None):
        response = super().changelist_view(request, extra_context)
        changelist = (getattr(response, "context_data", None) or {}).get("cl")
        if response.status_code == 200 and changelist is not None:
            # The page's rows, already read for the page (iterating caches them for the template).
            self.staff_access_record_listed(request, changelist.result_list)
        return response

    def staff_access_record_listed(self, request, objs) -> None:
        """A page listed these objects (titles, names): one row per person, one
        INSERT. Also called by the admin's autocomplete (organizations.admin_site)."""
        staff_accesses_record_listed(staff=request.user, kind=self.staff_access_kind,
                                     owners=self.staff_access_owners(objs), path=request.get_full_path())

    def get_actions(self, request):
        # The list's "Delete selected" shows the chosen objects (their titles)
        # on its confirmation page, then destroys them: one row per person at each step.
        actions = super().get_actions(request)
        if "delete_selected" in actions:
            func, name, description = actions["delete_selected"]
            actions["delete_selected"] = (_recording_staff_access(func), name, description)
        return actions

    def _record_shown(self, request, response) -> None:
        """A page rendered with the object (not a redirect, not a refusal)."""
        obj = (getattr(response, "context_data", None) or {}).get("object")
        if response.status_code == 200 and obj is not None:
            self._record_staff_access(request, obj)


def _recording_staff_access(action):
    """`action` (an admin action over a person's objects), recording whose objects it was given."""

    @functools.wraps(action)
    def recorded(modeladmin, request, queryset):
        # The trace first: deleting an account then blanks its person on the rows
        # (StaffAccess.person is SET_NULL); written after, the rows would name a
        # deleted user (IntegrityError). One transaction: no trace without the action.
        with transaction.atomic():
            modeladmin.staff_access_record_listed(request, queryset)
            return action(modeladmin, request, queryset)

    return recorded


class AccountAdmin(RecordsStaffAccess, UserAdmin):
    """django.contrib.auth's account pages, leaving a trace: an account's page
    shows the person's name, e-mail address, last sign-in and groups. An account
    belongs to no single organization: one row for each organization the person
    is a member of, so each organization's data page tells the person (an
    account without memberships: one row without an organization, for the
    operators' own audit)."""

    staff_access_kind = StaffAccess.Kind.ACCOUNT

    def staff_access_owners(self, objs) -> set[tuple[int | None, int | None]]:
        user_ids = {user.pk for user in objs}
        owners = set(Membership.objects.filter(user_id__in=user_ids).values_list("user_id", "organization_id"))
        without = user_ids - {user_id for user_id, _ in owners}
        return owners | {(user_id, None) for user_id in without}

    def user_change_password(self, request, id, form_url=""):
        response = super().user_change_password(request, id, form_url)
        # The password page names the account: seen like its change page.
        user = (getattr(response, "context_data", None) or {}).get("original")
        if response.status_code == 200 and user is not None:
            self._record_staff_access(request, user)
        return response


# django.contrib.auth (installed before this app) registered its own; ours replaces it. A
# product with its own user model keeps its own admin of it (RecordsStaffAccess is for it to mix in).
if settings.AUTH_USER_MODEL == "auth.User":
    if admin.site.is_registered(get_user_model()):
        admin.site.unregister(get_user_model())
    admin.site.register(get_user_model(), AccountAdmin)

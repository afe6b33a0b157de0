"""Staff see accounts and the ledger read-only; money moves only through services.

The one write staff have is "Grant credits", which goes through credits_grant
and so leaves a ledger row naming them.
"""

from datetime import UTC

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Max, Min
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html

from assistant_engine.foundation.admin import ScaledChangeList, ViewOnlyAdminMixin, chosen_only_filter, drill_down
from assistant_engine.foundation.people import login_field
from assistant_engine.organizations.admin import RecordsStaffAccess
from assistant_engine.organizations.models import Organization, StaffAccess
from credits.models import CreditAccount, LedgerEntry
from credits.money import credits_from_micros, current_month
from credits.overview import spend_overview
from credits.services import MAX_GRANT_CREDITS, credits_grant


class ReadOnlyAdmin(ViewOnlyAdminMixin, admin.ModelAdmin):
    """View only: an account edited by hand would no longer match its ledger."""


class GrantCreditsForm(forms.Form):
    organization = forms.ModelChoiceField(queryset=Organization.objects.order_by("name"))
    # The service's bounds, so that a refusal is a form error, never a 500.
    credits = forms.IntegerField(
        min_value=1, max_value=MAX_GRANT_CREDITS,
        help_text=f"Whole credits (1 credit = USD 0.01), at most {MAX_GRANT_CREDITS:,} per grant.",
    )
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), max_length=2000)


@admin.register(CreditAccount)
class CreditAccountAdmin(ReadOnlyAdmin):
    list_display = [
        "organization",
        "month",
        "granted_micros",
        "used_micros",
        "reserved_micros",
        "remaining_credits",
    ]
    list_filter = ["month", "organization"]
    search_fields = ["organization__slug", "organization__name", "month"]
    list_select_related = ["organization"]
    # A busy month has thousands of entries: link to the ledger's paginated
    # list instead of inlining them all on the account's page.
    readonly_fields = ["organization", "month", "granted_micros", "used_micros", "reserved_micros", "ledger"]
    change_list_template = "admin/credits/creditaccount/change_list.html"

    @admin.display(description="remaining (credits, rounded down)")
    def remaining_credits(self, account):
        return credits_from_micros(account.remaining_micros)

    @admin.display(description="ledger")
    def ledger(self, account):
        url = reverse("admin:credits_ledgerentry_changelist") + f"?account={account.pk}"
        return format_html('<a href="{}">{} entries</a>', url, account.entries.count())

    def get_urls(self):
        grant = path(
            "grant/", self.admin_site.admin_view(self.grant_view), name="credits_creditaccount_grant"
        )
        spend = path("spend/", self.admin_site.admin_view(self.spend_view), name="credits_creditaccount_spend")
        return [grant, spend, *super().get_urls()]

    def spend_view(self, request):
        """This month across organizations: the top spenders (a chart and its
        table), those past the first alert threshold; each a link to the account."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        context = {
            **self.admin_site.each_context(request),
            "overview": spend_overview(current_month(timezone.now())),
            "opts": self.opts,
            "title": "Spend across organizations",
        }
        return TemplateResponse(request, "admin/credits/spend.html", context)

    def grant_view(self, request):
        if not request.user.has_perm("credits.grant_credits"):
            raise PermissionDenied
        form = GrantCreditsForm(
            request.POST or None, initial={"organization": request.GET.get("organization")}
        )
        if request.method == "POST" and form.is_valid():
            entry = credits_grant(staff_user=request.user, **form.cleaned_data)
            messages.success(request, f"Granted {form.cleaned_data['credits']} credits ({entry.account}).")
            return redirect(reverse("admin:credits_creditaccount_change", args=[entry.account_id]))
        context = {
            **self.admin_site.each_context(request),
            "form": form,
            "opts": self.opts,
            "title": "Grant credits",
        }
        return TemplateResponse(request, "admin/credits/grant.html", context)


class AccountMonthFilter(admin.SimpleListFilter):
    """The months from the ledger's first entry to its last (the two ends of
    its created_at index), not a SELECT DISTINCT over every entry."""

    title = "account month"
    parameter_name = "account__month"

    def lookups(self, request, model_admin):
        ends = LedgerEntry.objects.aggregate(first=Min("created_at"), last=Max("created_at"))
        if ends["first"] is None:
            return []
        first, last = (ends[end].astimezone(UTC) for end in ("first", "last"))
        months = [(year, month) for year in range(first.year, last.year + 1) for month in range(1, 13)]
        shown = [f"{year:04d}-{month:02d}" for year, month in months
                 if (first.year, first.month) <= (year, month) <= (last.year, last.month)]
        return [(month, month) for month in reversed(shown)]

    def queryset(self, request, queryset):
        return queryset.filter(account__month=self.value()) if self.value() else queryset


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ScaledChangeList, RecordsStaffAccess, ReadOnlyAdmin):
    list_display = [
        "created_at",
        "account",
        "kind",
        "turn_id",
        "granted_delta",
        "used_delta",
        "reserved_delta",
        "actor",
        "job",
        "reason",
    ]
    list_filter = ["kind", AccountMonthFilter, chosen_only_filter("account__organization", "organization")]
    search_fields = ["=turn_id", "reason", "job", f"actor__{login_field()}", "account__organization__slug"]
    list_select_related = ["account__organization", "actor"]
    date_hierarchy = "created_at"
    staff_access_kind = StaffAccess.Kind.LEDGER_ENTRY

    def staff_access_owners(self, objs) -> set[tuple[int | None, int | None]]:
        # A turn's reservation names the person who started it (its actor): their
        # turn, when and what it cost. Other rows' actor is staff (a grant) or none.
        return {(entry.actor_id, entry.account.organization_id) for entry in objs
                if entry.turn_id is not None and entry.actor_id is not None}

    def get_queryset(self, request):
        # The date drill-down probes periods through the created_at index (foundation.admin.drill_down).
        return drill_down(super().get_queryset(request))

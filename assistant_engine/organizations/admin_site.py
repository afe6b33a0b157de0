"""The admin site: Django's own, whose autocomplete leaves a trace.

An autocomplete field (a membership's user, for one) asks
/admin/autocomplete/ for the objects matching what is typed: a list of
names, as a list page shows them, so it records one staff access row per
person shown, the same way (`RecordsStaffAccess.staff_access_record_listed`).
Installed by `TracedAdminConfig` in INSTALLED_APPS, Django's documented way
to replace the default site.
"""

from django.contrib.admin import AdminSite
from django.contrib.admin.apps import AdminConfig
from django.contrib.admin.views.autocomplete import AutocompleteJsonView
from django.utils.translation import gettext_lazy


class TracedAutocompleteJsonView(AutocompleteJsonView):
    def get_context_data(self, **kwargs):
        # Called after the permission check; the page's objects, read here, are
        # cached on the page's queryset for the response (no second query).
        context = super().get_context_data(**kwargs)
        record = getattr(self.model_admin, "staff_access_record_listed", None)
        if record is not None:
            record(self.request, context["object_list"])
        return context


class TracedAdminSite(AdminSite):
    # The product's staff pages, not Django's name for them.
    site_header = gettext_lazy("Staff administration")
    site_title = gettext_lazy("Staff administration")
    index_title = gettext_lazy("Organizations, conversations, credits and exports")
    # The index links the pages no model list leads to (the exports).
    index_template = "admin/assistant/index.html"

    def autocomplete_view(self, request):
        return TracedAutocompleteJsonView.as_view(admin_site=self)(request)


class TracedAdminConfig(AdminConfig):
    default_site = "assistant_engine.organizations.admin_site.TracedAdminSite"

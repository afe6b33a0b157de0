"""The operators' exports page in the admin (/admin/assistant/turn/exports/):
pick what, which organization and period, and a format; the file streams.
Every download records one staff access row per person whose numbers it
holds (kind `usage_export`): usage, turns and costs are the person's data."""

from datetime import UTC, datetime, time, timedelta

from django import forms
from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse
from django.utils import timezone

from assistant import exports
from assistant_engine.foundation.downloads import download_response
from assistant_engine.organizations.access_log import staff_accesses_record_listed
from assistant_engine.organizations.models import Organization, StaffAccess

# Who may download what: the ledger and the usage are accounting, the turns are the assistant's.
PERMISSIONS = {"ledger": "credits.view_ledgerentry", "usage": "credits.view_ledgerentry",
               "turns": "assistant.view_turn"}
CONTENT_TYPES = {"csv": "text/csv; charset=utf-8", "json": "application/json"}


class ExportForm(forms.Form):
    what = forms.ChoiceField(choices=[("ledger", "Ledger of an organization and month"),
                                      ("usage", "Usage per person per month"),
                                      ("turns", "Turns of a period")])
    # A slug typed in, not a <select> of every organization (thousands of options on each page).
    organization = forms.ModelChoiceField(queryset=Organization.objects.all(), to_field_name="slug",
                                          widget=forms.TextInput, required=False,
                                          help_text="Its slug. Needed for the ledger and the usage; "
                                          "for the turns, only this organization's.")
    # The browser's month picker (YYYY-MM); the pattern still checks what a URL sends.
    month = forms.RegexField(regex=r"^\d{4}-(0[1-9]|1[0-2])$", required=False, help_text="YYYY-MM (UTC).",
                             widget=forms.TextInput(attrs={"type": "month"}))
    start = forms.DateField(required=False, help_text="Turns created from this day (UTC)…",
                            widget=forms.DateInput(attrs={"type": "date"}))
    end = forms.DateField(required=False, help_text="…up to and including this day.",
                          widget=forms.DateInput(attrs={"type": "date"}))
    format = forms.ChoiceField(choices=[(fmt, fmt.upper()) for fmt in exports.FORMATS])

    def clean(self):
        data = super().clean()
        what = data.get("what")
        if what in ("ledger", "usage") and not data.get("organization"):
            self.add_error("organization", "Choose an organization.")
        if what == "ledger" and not data.get("month"):
            self.add_error("month", "Choose a month.")
        if what == "turns":
            if not (data.get("start") and data.get("end")):
                self.add_error("start", "Choose the first and last day.")
            elif data["end"] < data["start"]:
                self.add_error("end", "The last day comes after the first.")
        return data


def period(data: dict) -> dict:
    """The turns' period: from the first day's start to the end of the last (UTC)."""
    return {"start": datetime.combine(data["start"], time.min, tzinfo=UTC),
            "end": datetime.combine(data["end"] + timedelta(days=1), time.min, tzinfo=UTC),
            "organization": data.get("organization")}


def table_for(data: dict, until: datetime) -> exports.Table:
    what = data["what"]
    if what == "ledger":
        return exports.ledger_table(data["organization"], data["month"], until=until)
    if what == "usage":
        return exports.usage_table(data["organization"], data.get("month") or None)
    return exports.turns_table(**period(data), until=until)


def people_in(data: dict, table: exports.Table, until: datetime) -> set[tuple[int, int]]:
    """The (person, organization) pairs whose numbers the file holds."""
    what = data["what"]
    if what == "ledger":
        return exports.ledger_people(data["organization"], data["month"], until=until)
    if what == "usage":  # a list already read: its user ids (an erased person's usage is no one's)
        return {(row[1], data["organization"].pk) for row in table.rows if row[1] is not None}
    return exports.turns_people(**period(data), until=until)


def exports_view(admin_site, request):
    """GET without a choice: the form. GET with a valid choice: the file, streamed."""
    form = ExportForm(request.GET or None)
    if form.is_valid():
        data = form.cleaned_data
        if not request.user.has_perm(PERMISSIONS[data["what"]]):
            raise PermissionDenied
        # The people and the rows are two queries: both read up to one moment, so a
        # turn started between them (a period including today) is in neither.
        until = timezone.now()
        table = table_for(data, until)
        # Each person whose numbers the file holds is told (the staff access log),
        # before the first byte: a download cut short has still shown its start.
        staff_accesses_record_listed(staff=request.user, kind=StaffAccess.Kind.USAGE_EXPORT,
                                     owners=people_in(data, table, until), path=request.get_full_path())
        return streamed(request, table, data["format"])
    context = {**admin_site.each_context(request), "form": form, "title": "Exports"}
    return TemplateResponse(request, "admin/assistant/exports.html", context, status=400 if form.is_bound else 200)


def streamed(request, table: exports.Table, fmt: str):
    return download_response(request, exports.stream(table, fmt), content_type=CONTENT_TYPES[fmt],
                             filename=f"{table.name}.{fmt}")

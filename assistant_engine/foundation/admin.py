from collections.abc import Callable
from datetime import date, datetime, timedelta

from django.contrib import admin
from django.contrib.admin.utils import get_fields_from_path
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db import connections
from django.db.models import Max, Min, QuerySet
from django.utils import timezone
from django.utils.functional import cached_property


class ViewOnlyAdminMixin:
    """For admins and inlines that staff may look at but never edit by hand:
    the data is written by the services (ledger, turns, cards), and an edit
    would break what they keep consistent."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


# --- Changelists that cost the page, not the table ------------------------------------



# Below this many rows (as PostgreSQL estimates them) the exact count is cheap.
ESTIMATE_FROM_ROWS = 10_000
# A filtered changelist counts its matches up to this many (10 pages of 100):
# a filter that matches every tenant's rows (a month of the ledger, a model's
# turns) would otherwise count them all on every page. Past it, staff refine.
COUNT_CAP = 1_000


class EstimatedCountPaginator(Paginator):
    """An unfiltered changelist counts with PostgreSQL's estimate of the
    table's rows (pg_class.reltuples, kept by ANALYZE and autovacuum) instead of
    a COUNT(*) over every tenant's rows on each page; a filtered or searched
    one counts its matches up to COUNT_CAP. The total is a guide to paging,
    not an audit figure (the exports are)."""

    @cached_property
    def count(self):
        queryset = self.object_list
        if not isinstance(queryset, QuerySet):
            return super().count
        if not queryset.query.where:
            estimate = table_estimate(queryset)
            if estimate is not None and estimate >= ESTIMATE_FROM_ROWS:
                return estimate
            return queryset.count()
        # No ORDER BY: the count needs none, and it would make the planner walk
        # the ordering's index instead of the filter's.
        return queryset.order_by()[:COUNT_CAP].count()


def table_estimate(queryset: QuerySet) -> int | None:
    connection = connections[queryset.db]
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples::bigint FROM pg_class WHERE oid = %s::regclass",
                       [queryset.model._meta.db_table])
        row = cursor.fetchone()
    return int(row[0]) if row and row[0] >= 0 else None  # -1: never analyzed


class ScaledChangeList:
    """For a ModelAdmin: the estimated count, and no second COUNT(*) of the
    whole table for "N total" next to a filtered result."""

    paginator = EstimatedCountPaginator
    show_full_result_count = False


class DrillDownQuerySet(QuerySet):
    """`datetimes()` for the admin's date_hierarchy without a DISTINCT over
    every row: the periods from the first to the last row (MIN and MAX, the
    two ends of an index on the field), each kept when one row lies in it (an
    index probe, LIMIT 1). At most ~31 probes a page, whatever the table holds."""

    def datetimes(self, field_name, kind, order="ASC", tzinfo=None):
        if kind not in ("year", "month", "day"):
            return super().datetimes(field_name, kind, order, tzinfo)
        zone = tzinfo or timezone.get_current_timezone()
        ends = self.aggregate(first=Min(field_name), last=Max(field_name))
        if ends["first"] is None:
            return []
        start, periods = _period_start(ends["first"].astimezone(zone), kind), []
        while start <= ends["last"]:
            end = _period_after(start, kind)
            if self.filter(**{f"{field_name}__gte": start, f"{field_name}__lt": end}).exists():
                periods.append(start)
            start = end
        return periods if order == "ASC" else periods[::-1]


def drill_down(queryset: QuerySet) -> DrillDownQuerySet:
    clone = queryset.all()
    clone.__class__ = DrillDownQuerySet  # no state of its own: only the two methods differ
    return clone


def _period_start(moment: datetime, kind: str) -> datetime:
    day = moment.date().replace(**({"year": {"month": 1, "day": 1}, "month": {"day": 1}}.get(kind, {})))
    return datetime.combine(day, datetime.min.time(), tzinfo=moment.tzinfo)


def _period_after(start: datetime, kind: str) -> datetime:
    day: date = start.date()
    if kind == "year":
        day = day.replace(year=day.year + 1)
    elif kind == "month":
        day = day.replace(year=day.year + day.month // 12, month=day.month % 12 + 1)
    else:
        day = day + timedelta(days=1)
    return datetime.combine(day, datetime.min.time(), tzinfo=start.tzinfo)


def listed_filter(field: str, title: str, choices: Callable[[], list[str]]) -> type[admin.SimpleListFilter]:
    """A filter whose choices come from a list the code knows (the model
    catalog, the declared tools), not a SELECT DISTINCT over every row."""

    class Listed(admin.SimpleListFilter):
        parameter_name = field

        def lookups(self, request, model_admin):
            return [(value, value) for value in choices()]

        def queryset(self, request, queryset):
            return queryset.filter(**{field: self.value()}) if self.value() else queryset

    Listed.title = title
    return Listed


def chosen_only_filter(field_path: str, title: str) -> type[admin.SimpleListFilter]:
    """A filter by a related object (an organization) that lists only the one
    chosen, not every row of its table (a thousand organizations on every page):
    staff choose by searching (`=slug`) or by a row's link."""

    class ChosenOnly(admin.SimpleListFilter):
        parameter_name = f"{field_path}__id__exact"

        def lookups(self, request, model_admin):
            if not self.value():
                return []
            related = get_fields_from_path(model_admin.model, field_path)[-1].related_model
            try:
                chosen = related.objects.filter(pk=self.value()).first()
            except (ValueError, ValidationError):  # the changelist then refuses the parameter
                chosen = None
            return [(self.value(), str(chosen) if chosen else f"#{self.value()}")]

        def queryset(self, request, queryset):
            return queryset.filter(**{f"{field_path}__id__exact": self.value()}) if self.value() else queryset

    ChosenOnly.title = title
    return ChosenOnly

"""The organization page's spend section (issue 35.1): four charts, each drawn
by the server as SVG bars with a table of the same numbers beside it (no
script, no build step, nothing the strict CSP blocks; the table is what screen
readers read). The numbers come from credits/spend.py (day totals, month
totals) and the people's month totals the page already read; here they are
only laid out: each bar's box in its chart's viewBox, each table's rows, in
whole credits (floored, credits/money.py) and in the person's language."""

import calendar
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date

from django.utils.formats import date_format
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from assistant_engine.providers.catalog import CATALOG
from credits.models import Door
from credits.money import credits_from_micros
from credits.spend import OrganizationSpend, PersonSpend

# Colours of a chart's series (CSS custom properties of the app's themes: shell.css .spend-series-N).
SERIES = 6
SLOT = 10  # a column chart's slot, and a bar chart's row, in viewBox units
FULL = 100  # a column's full height, a bar's full length

DOORS = {
    Door.BROWSER: gettext_lazy("Chat page"), Door.PANEL: gettext_lazy("Panel of a page"),
    Door.API: gettext_lazy("API"), Door.AI_MEMORY: "/ai/", Door.MCP: "MCP", Door.TELEGRAM: "Telegram",
}


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    series: int
    credits: int
    title: str


@dataclass(frozen=True)
class Row:
    label: str
    cells: list[int]


@dataclass
class Chart:
    key: str
    title: str
    caption: str
    head: list[str]
    rows: list[Row]
    bars: list[Bar]
    view_width: int
    view_height: int
    height_em: int = 9
    legend: list[tuple[str, int]] = field(default_factory=list)
    total: Row | None = None


@dataclass(frozen=True)
class SpendSection:
    charts: list[Chart]


def spend_section(spend: OrganizationSpend, people: tuple[list[PersonSpend], PersonSpend]) -> SpendSection:
    return SpendSection([_days(spend), _months(spend), _people(*people), _doors(spend)])


def not_recorded() -> str:
    return _("Not recorded")


MODEL_LABELS = {option.id: option.label for option in CATALOG}


def model_label(option_id: str) -> str:
    return MODEL_LABELS.get(option_id, option_id) if option_id else not_recorded()


def _columns(stacks: list[list[tuple[int, int, str]]]) -> list[Bar]:
    """Column charts: each slot a stack of (series, micros, title), bottom up, scaled to the tallest."""
    tallest = max((sum(micros for _s, micros, _t in stack) for stack in stacks), default=0) or 1
    bars = []
    for slot, stack in enumerate(stacks):
        top = FULL
        for series, micros, title in stack:
            height = micros * FULL / tallest
            top -= height
            bars.append(Bar(slot * SLOT + 1, round(top, 2), SLOT - 2, round(height, 2), series,
                            credits_from_micros(micros), title))
    return bars


def _lines(items: list[tuple[int, int, str]]) -> list[Bar]:
    """Bar charts: a row each of (series, micros, title), scaled to the longest (nothing drawn for nothing)."""
    longest = max((micros for _s, micros, _t in items), default=0) or 1
    return [Bar(0, row * SLOT + 1, round(micros * FULL / longest, 2), SLOT - 2, series, credits_from_micros(micros),
                title) for row, (series, micros, title) in enumerate(items) if micros]


def _credits_title(label: str, micros: int) -> str:
    return _("%(label)s: %(credits)s credits") % {"label": label, "credits": credits_from_micros(micros)}


def _days(spend: OrganizationSpend) -> Chart:
    year, number = (int(part) for part in spend.month.split("-"))
    by_day: dict[date, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    by_model: dict[str, int] = defaultdict(int)
    for row in spend.days:
        by_day[row.day][row.model] += row.used_micros
        by_model[row.model] += row.used_micros
    models = sorted(by_model, key=lambda model: (-by_model[model], model))
    series = {model: index % SERIES + 1 for index, model in enumerate(models)}
    stacks = []
    for day_number in range(1, calendar.monthrange(year, number)[1] + 1):
        day = date(year, number, day_number)
        shown, used = date_format(day, "MONTH_DAY_FORMAT"), by_day.get(day, {})
        stacks.append([(series[model], used[model], _credits_title(f"{shown}, {model_label(model)}", used[model]))
                       for model in models if used.get(model)])
    rows = [Row(date_format(day, "MONTH_DAY_FORMAT"), [credits_from_micros(models_of_day.get(model, 0))
                                                       for model in models]
                + [credits_from_micros(sum(models_of_day.values()))]) for day, models_of_day in sorted(by_day.items())]
    total = Row(_("Month"), [credits_from_micros(by_model[model]) for model in models]
                + [credits_from_micros(sum(by_model.values()))])
    return Chart("days", _("This month by day"), _("Credits used each day of %(month)s (UTC), by model") % {
        "month": date_format(date(year, number, 1), "YEAR_MONTH_FORMAT")},
        [_("Day"), *(model_label(model) for model in models), _("All models")], rows, _columns(stacks),
        view_width=len(stacks) * SLOT, view_height=FULL, legend=[(model_label(m), series[m]) for m in models],
        total=total)


def _months(spend: OrganizationSpend) -> Chart:
    labels = [date_format(date(int(month[:4]), int(month[5:]), 1), "YEAR_MONTH_FORMAT") for month, _used in
              spend.months]
    stacks = [[(1, used, _credits_title(label, used))] if used else [] for label, (_m, used) in
              zip(labels, spend.months, strict=True)]
    rows = [Row(label, [credits_from_micros(used)]) for label, (_m, used) in zip(labels, spend.months, strict=True)]
    return Chart("months", _("The last 12 months"), _("Credits used each month (UTC)"), [_("Month"), _("Credits")],
                 rows, _columns(stacks), view_width=len(stacks) * SLOT, view_height=FULL)


def _people(top: list[PersonSpend], rest: PersonSpend) -> Chart:
    everyone_else = _("Everyone else")
    items = [(1, person.used_micros, _credits_title(person.name, person.used_micros)) for person in top]
    rows = [Row(person.name, [credits_from_micros(person.used_micros), person.turns]) for person in top]
    if rest.used_micros or rest.turns:
        items.append((2, rest.used_micros, _credits_title(everyone_else, rest.used_micros)))
        rows.append(Row(everyone_else, [credits_from_micros(rest.used_micros), rest.turns]))
    used = sum(person.used_micros for person in top) + rest.used_micros
    turns = sum(person.turns for person in top) + rest.turns
    return Chart("people", _("This month by person"), _("Credits used this month by the 10 people who used the "
                                                        "most, and everyone else"),
                 [_("Person"), _("Credits"), _("Turns")], rows, _lines(items), view_width=FULL,
                 view_height=max(len(items), 1) * SLOT, height_em=max(len(items), 1) * 2,
                 total=Row(_("Everyone"), [credits_from_micros(used), turns]))


def _doors(spend: OrganizationSpend) -> Chart:
    used: dict[str, int] = defaultdict(int)
    turns: dict[str, int] = defaultdict(int)
    for row in spend.days:
        used[row.door] += row.used_micros
        turns[row.door] += row.turns
    doors = [*DOORS, *([""] if "" in used else [])]
    labels = {**DOORS, "": not_recorded()}
    items = [(1, used[door], _credits_title(str(labels[door]), used[door])) for door in doors]
    rows = [Row(str(labels[door]), [credits_from_micros(used[door]), turns[door]]) for door in doors]
    return Chart("doors", _("This month by door"), _("Credits used this month through each door, and the turns "
                                                     "they paid for"),
                 [_("Door"), _("Credits"), _("Turns")], rows, _lines(items), view_width=FULL,
                 view_height=len(items) * SLOT, height_em=len(items) * 2,
                 total=Row(_("All doors"), [credits_from_micros(sum(used.values())), sum(turns.values())]))

"""Operators' exports: an organization's ledger of a month, usage per person
per month, and the turns of a period — as CSV or JSON, streamed.

Rows are read with `.iterator()` (a server-side cursor on PostgreSQL, chunked
fetches on SQLite) and written a batch at a time, so memory stays flat
whatever the number of rows. Formats come from the standard library's `csv`
and `json`: tablib and django-import-export build the whole dataset in memory
before writing it, which is what streaming must avoid.

Never content: turns are exported by their numbers (status, failure kind,
steps, tokens, cost, model, key source), not by what was said.
"""

import csv
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from uuid import UUID

from django.db.models import F, Subquery, Sum

from assistant.models import Turn
from assistant_engine.foundation.people import login_field
from assistant_engine.organizations.models import Organization
from credits.models import CreditAccount, LedgerEntry, MemberMonthUsage
from credits.money import MICROS_PER_CREDIT

BATCH_ROWS = 500
FORMATS = ("csv", "json")


@dataclass(frozen=True)
class Table:
    """A header and an iterator of rows (tuples in the header's order)."""

    name: str
    header: tuple[str, ...]
    rows: Iterable[tuple]


# --- What is exported -------------------------------------------------------------

LEDGER_HEADER = ("id", "created_at", "month", "kind", "turn_id", "granted_micros", "used_micros",
                 "reserved_micros", "actor_id", "job", "reason")


def ledger_table(organization: Organization, month: str, *, until: datetime) -> Table:
    """The rows written before `until` (as `ledger_people`, so both read the same rows)."""
    rows = (
        # The account as a scalar subquery: the entries are then one range of the
        # (account, id) index, already in order, even through a server-side cursor
        # (whose plans favour a fast start: a walk of the whole ledger's key).
        LedgerEntry.objects.filter(account_id=Subquery(
            CreditAccount.objects.filter(organization=organization, month=month).values("id")[:1]),
            created_at__lt=until)
        .order_by("id")
        .values_list("id", "created_at", "account__month", "kind", "turn_id", "granted_delta", "used_delta",
                     "reserved_delta", "actor_id", "job", "reason")
        .iterator(chunk_size=2000)
    )
    return Table(f"ledger-{organization.slug}-{month}", LEDGER_HEADER, rows)


def ledger_people(organization: Organization, month: str, *, until: datetime) -> set[tuple[int, int]]:
    """Whose turns the ledger's rows written before `until` show: a turn's rows
    name the person who started it (its actor), as the ledger's admin counts
    them; a grant's actor is staff. One query."""
    actors = (LedgerEntry.objects.filter(account__organization=organization, account__month=month,
                                         created_at__lt=until, turn_id__isnull=False, actor_id__isnull=False)
              .order_by().values_list("actor_id", flat=True).distinct())
    return {(actor_id, organization.pk) for actor_id in actors}


# Credits first (what the organization's page and grant speak in), micros beside them for the exact sums.
USAGE_HEADER = ("month", "user_id", "username", "turns", "used_credits", "reserved_credits", "used_micros",
                "reserved_micros")


def usage_rows(organization_id: int, month: str | None = None) -> list[tuple]:
    """Per person and month: turns started, micros used and still reserved.

    Read from the month totals the ledger's write keeps (MemberMonthUsage), one
    row per person and month, so it costs the members, not the ledger. A
    turn's person is the actor of its start reservation; an erased person's
    turns count under no one (user_id None). One query; a list (bounded by the
    members).
    """
    usages = MemberMonthUsage.objects.filter(account__organization_id=organization_id)
    if month:
        usages = usages.filter(account__month=month)
    grouped = (
        usages.values("account__month", "user_id", login=F(f"user__{login_field()}"))
        .annotate(turns=Sum("turns"), used=Sum("used_micros"), reserved=Sum("reserved_micros"))
        .order_by("account__month", "user_id")
    )
    return [
        (row["account__month"], row["user_id"], row["login"] or "", row["turns"], as_credits(row["used"]),
         as_credits(row["reserved"]), row["used"], row["reserved"])
        for row in grouped
    ]


def as_credits(micros: int) -> str:
    """Credits to the micro (1 credit = 10,000 micros), written out: "0.4000"."""
    return f"{Decimal(micros) / MICROS_PER_CREDIT:.4f}"


def usage_table(organization: Organization, month: str | None) -> Table:
    return Table(f"usage-{organization.slug}-{month or 'all'}", USAGE_HEADER, usage_rows(organization.pk, month))


TURNS_HEADER = ("id", "created_at", "finished_at", "organization", "user_id", "status", "failure_kind", "steps",
                "tool_calls", "input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens",
                "reserved_micros", "cost_micros", "model_option", "key_source")


def turns_of_period(*, start: datetime, end: datetime, organization: Organization | None = None):
    """A range of the index on (organization, created_at), or on created_at for everyone's."""
    turns = Turn.objects.filter(created_at__gte=start, created_at__lt=end)
    if organization is not None:
        turns = turns.filter(organization=organization)
    return turns.order_by("created_at", "id")


def turns_people(*, start: datetime, end: datetime, until: datetime, organization: Organization | None = None
                 ) -> set[tuple[int, int]]:
    """The (person, organization) pairs whose turns the period holds, created
    before `until` as in `turns_table` (an erased person's turns are no one's).
    One query over the same index range."""
    turns = (turns_of_period(start=start, end=min(end, until), organization=organization)
             .filter(user_id__isnull=False))
    return set(turns.order_by().values_list("user_id", "organization_id").distinct())


def turns_table(*, start: datetime, end: datetime, until: datetime, organization: Organization | None = None
                ) -> Table:
    """The period's turns created before `until` (the file's name says the period chosen)."""
    turns = turns_of_period(start=start, end=min(end, until), organization=organization)
    rows = turns.values_list(
        "id", "created_at", "finished_at", "organization__slug", "user_id", "status", "failure_kind", "steps",
        "tool_calls", "input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens",
        "reserved_micros", "cost_micros", "model_option", "key_source",
    ).iterator(chunk_size=2000)
    scope = organization.slug if organization else "all"
    return Table(f"turns-{scope}-{start:%Y%m%d}-{end:%Y%m%d}", TURNS_HEADER, rows)


# --- How it is written ----------------------------------------------------------------


class _Line:
    """A file-like object whose write returns what it was given (csv.writer then
    formats one row at a time without a buffer)."""

    def write(self, value: str) -> str:
        return value


def _batched(pieces: Iterator[str]) -> Iterator[str]:
    """Join pieces BATCH_ROWS at a time: fewer, larger chunks on the wire."""
    batch: list[str] = []
    for piece in pieces:
        batch.append(piece)
        if len(batch) >= BATCH_ROWS:
            yield "".join(batch)
            batch = []
    if batch:
        yield "".join(batch)


def csv_lines(table: Table) -> Iterator[str]:
    writer = csv.writer(_Line())
    yield writer.writerow(table.header)
    yield from _batched(writer.writerow(_plain(row)) for row in table.rows)


def json_lines(table: Table) -> Iterator[str]:
    """A JSON array of objects, one per row, written as the rows come."""

    def pieces() -> Iterator[str]:
        opened = False
        for row in table.rows:
            record = json.dumps(dict(zip(table.header, _plain(row), strict=True)), ensure_ascii=False)
            yield ("," if opened else "[") + "\n" + record
            opened = True
        yield "\n]\n" if opened else "[]\n"

    return _batched(pieces())


def _plain(row: tuple) -> tuple:
    """Values as CSV and JSON write them: datetimes in ISO 8601, UUIDs as text."""
    return tuple(
        value.isoformat() if isinstance(value, datetime) else str(value) if isinstance(value, UUID) else value
        for value in row
    )


def stream(table: Table, fmt: str) -> Iterator[str]:
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}")
    return csv_lines(table) if fmt == "csv" else json_lines(table)

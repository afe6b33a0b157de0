"""Operators' exports from the admin: the ledger of an organization and month,
usage per person per month, the turns of a period (never content), as CSV and
JSON, streamed in constant memory."""

import csv
import io
import json
import tracemalloc

import pytest
from django.test import Client
from django.utils import timezone

from assistant_engine.providers.clients.base import Usage
from credits.models import CreditAccount, LedgerEntry
from credits.money import current_month
from tests.admin.conftest import logged_in, make_staff
from tests.assistant.conftest import play
from tests.fakes.scripted import ScriptedClient, say

URL = "/admin/assistant/turn/exports/"
SECRET_TEXT = "my confidential question about the merger"


def body(response) -> str:
    assert response.streaming
    return b"".join(response.streaming_content).decode()


def rows(response) -> list[dict]:
    return list(csv.DictReader(io.StringIO(body(response))))


@pytest.fixture
def activity(owner, colleague, outsider):
    """Two turns by the owner, one by the colleague, one in another organization."""
    for person, text in ((owner, SECRET_TEXT), (owner, "again"), (colleague, "hi"), (outsider, "hello")):
        play(person, ScriptedClient(say("Sure.", usage=Usage(1_000, 200))), message=text)
    return current_month(timezone.now())


def test_the_ledger_of_an_organization_and_month_as_csv_and_json(root_client, activity, acme):
    query = {"what": "ledger", "organization": "acme", "month": activity}

    as_csv = rows(root_client.get(URL, {**query, "format": "csv"}))
    response = root_client.get(URL, {**query, "format": "json"})
    as_json = json.loads(body(response))

    entries = LedgerEntry.objects.filter(account__organization=acme).order_by("id")
    assert [int(row["id"]) for row in as_csv] == [entry.id for entry in entries] == [row["id"] for row in as_json]
    assert [row["kind"] for row in as_json] == ["open"] + ["reserve", "settle"] * 3
    assert response["Content-Disposition"] == f'attachment; filename="ledger-acme-{activity}.json"'


def test_usage_per_person_per_month(root_client, activity, owner, colleague):
    usage = rows(root_client.get(URL, {"what": "usage", "organization": "acme", "month": activity,
                                       "format": "csv"}))

    by_name = {row["username"]: row for row in usage}
    assert set(by_name) == {"olivia", "colin"}
    assert by_name["olivia"]["turns"] == "2" and by_name["colin"]["turns"] == "1"
    # Haiku: 1000 in + 200 out = 2,000 micros a turn, nothing left reserved.
    assert (by_name["olivia"]["used_micros"], by_name["olivia"]["reserved_micros"]) == ("4000", "0")
    assert (by_name["olivia"]["used_credits"], by_name["olivia"]["reserved_credits"]) == ("0.4000", "0.0000")


def test_the_turns_of_a_period_carry_numbers_never_content(root_client, activity, owner):
    today = timezone.now().date().isoformat()

    response = root_client.get(URL, {"what": "turns", "start": today, "end": today, "format": "json"})

    text = body(response)
    turns = json.loads(text)
    assert len(turns) == 4 and {t["organization"] for t in turns} == {"acme", "globex"}
    assert {t["status"] for t in turns} == {"done"} and {t["key_source"] for t in turns} == {"deployment"}
    assert all(t["cost_micros"] == 2000 and t["input_tokens"] == 1000 for t in turns)
    assert SECRET_TEXT not in text and "Sure." not in text


def test_the_turns_of_one_organization(root_client, activity):
    today = timezone.now().date().isoformat()
    turns = rows(root_client.get(URL, {"what": "turns", "organization": "globex", "start": today, "end": today,
                                       "format": "csv"}))
    assert [t["organization"] for t in turns] == ["globex"]


def test_an_empty_export_is_a_valid_file(root_client, acme):
    response = root_client.get(URL, {"what": "ledger", "organization": "acme", "month": "2020-01",
                                     "format": "json"})
    assert json.loads(body(response)) == []


def test_staff_need_the_permission_of_what_they_export(activity, acme):
    accountant = logged_in(make_staff("acc", "credits.view_ledgerentry"))
    ledger = {"what": "ledger", "organization": "acme", "month": activity, "format": "csv"}
    today = timezone.now().date().isoformat()
    turns = {"what": "turns", "start": today, "end": today, "format": "csv"}

    assert accountant.get(URL, ledger).status_code == 200
    assert accountant.get(URL, turns).status_code == 403
    assert logged_in(make_staff("nobody")).get(URL, ledger).status_code == 403
    anonymous = Client().get(URL, ledger)
    assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]


@pytest.mark.parametrize("query", [
    {"what": "ledger", "organization": "acme", "format": "csv"},  # no month
    {"what": "ledger", "organization": "acme", "month": "2026-13", "format": "csv"},
    {"what": "usage", "format": "csv"},  # no organization
    {"what": "turns", "start": "2026-02-01", "end": "2026-01-01", "format": "csv"},
    {"what": "ledger", "organization": "nope", "month": "2026-01", "format": "csv"},
    {"what": "ledger", "organization": "acme", "month": "2026-01", "format": "xlsx"},
])
def test_a_bad_choice_shows_the_form_again_with_400(root_client, acme, query):
    response = root_client.get(URL, query)
    assert response.status_code == 400 and b"<form" in response.content


def test_the_form_page(root_client):
    response = root_client.get(URL)
    assert response.status_code == 200 and b"Usage per person per month" in response.content
    page = response.content.decode()
    assert 'type="month" name="month"' in page and 'type="date" name="start"' in page  # pickers


def test_the_admins_index_leads_to_the_exports_and_is_the_products(root_client):
    """Issue 34.6: the exports page linked from the index; the product's name for it, not Django's."""
    page = root_client.get("/admin/").content.decode()
    assert f'href="{URL}" data-admin-exports' in page
    assert "Django administration" not in page and "Staff administration" in page
    assert "API tokens" in page and "Api tokens" not in page


def fill_ledger(organization, month: str, count: int) -> None:
    now = timezone.now()
    account = CreditAccount.objects.create(organization=organization, month=month, opened_at=now, updated_at=now)
    batch = 10_000
    for start in range(0, count, batch):
        LedgerEntry.objects.bulk_create([
            LedgerEntry(account=account, kind="grant", granted_delta=1, job="bulk", reason=f"grant {index}",
                        created_at=now)
            for index in range(start, min(start + batch, count))
        ])


def peak_while_streaming(client, organization, month: str) -> tuple[int, int]:
    """(peak bytes allocated from the request to the last byte, lines received)."""
    lines = 0
    tracemalloc.start()
    try:
        response = client.get(URL, {"what": "ledger", "organization": organization.slug, "month": month,
                                    "format": "csv"})
        for chunk in response.streaming_content:
            lines += chunk.count(b"\n")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, lines


def test_an_export_of_100000_ledger_rows_streams_in_flat_memory(root_client, acme, globex):
    fill_ledger(acme, "2026-01", 100_000)
    fill_ledger(globex, "2026-01", 10_000)
    peak_while_streaming(root_client, globex, "2025-12")  # first request: loads what every request reuses

    small_peak, small_lines = peak_while_streaming(root_client, globex, "2026-01")
    large_peak, large_lines = peak_while_streaming(root_client, acme, "2026-01")

    assert (small_lines, large_lines) == (10_001, 100_001)
    # Ten times the rows, about the same memory: rows are never all held at once
    # (holding 100,000 rows would take tens of megabytes).
    assert large_peak < 1.5 * small_peak, (small_peak, large_peak)
    assert large_peak < 8 * 1024 * 1024, large_peak

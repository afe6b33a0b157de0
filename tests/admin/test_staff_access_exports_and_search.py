"""Two staff views that left no trace (the reviewer's finding): the operators'
exports (the turns of a period, usage per person, the ledger: each person's
tokens and costs) and the admin's autocomplete, which lists accounts by name
as a list page does (a membership's user field searches it)."""

import csv
import io
from datetime import timedelta

import pytest
from django.utils import timezone

from assistant import exports
from assistant_engine.organizations.models import StaffAccess
from assistant_engine.providers.clients.base import Usage
from tests.admin.conftest import logged_in, make_staff
from tests.assistant.conftest import play
from tests.fakes.scripted import ScriptedClient, say
from tests.web.conftest import web_client

EXPORTS = "/admin/assistant/turn/exports/"
AUTOCOMPLETE = "/admin/autocomplete/"
EXPORT_WORDS = "a staff member downloaded a table of your use of the assistant and what it cost"


def rows() -> list[tuple]:
    return sorted(StaffAccess.objects.values_list("staff_username", "person_id", "organization_id", "kind",
                                                  "object_id"), key=str)


def downloaded(client, query: dict) -> str:
    response = client.get(EXPORTS, query)
    assert response.status_code == 200
    return b"".join(response.streaming_content).decode()


@pytest.fixture
def activity(owner, colleague, outsider):
    """A turn each: two people of acme, one of globex."""
    for person in (owner, colleague, outsider):
        play(person, ScriptedClient(say("Sure.", usage=Usage(1_000, 200))), message="hi")
    today = timezone.now().date()
    return {"start": today - timedelta(days=1), "end": today + timedelta(days=1)}


@pytest.mark.django_db
def test_the_turns_export_records_each_person_whose_turns_it_holds(owner, colleague, outsider, activity):
    client = logged_in(make_staff("mo", "assistant.view_turn"))

    downloaded(client, {"what": "turns", **activity, "organization": "acme", "format": "csv"})
    assert rows() == sorted([("mo", person.user.pk, person.organization.pk, "usage_export", "")
                             for person in (owner, colleague)], key=str)

    StaffAccess.objects.all().delete()
    downloaded(client, {"what": "turns", **activity, "format": "json"})  # every organization's
    assert rows() == sorted([("mo", person.user.pk, person.organization.pk, "usage_export", "")
                             for person in (owner, colleague, outsider)], key=str)
    assert EXPORT_WORDS in web_client(outsider).get("/data/").content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("what", ["usage", "ledger"])
def test_the_usage_and_ledger_exports_record_each_person_they_hold(owner, colleague, outsider, activity, what):
    client = logged_in(make_staff("mo", "credits.view_ledgerentry"))
    month = f"{timezone.now():%Y-%m}"

    downloaded(client, {"what": what, "organization": "acme", "month": month, "format": "csv"})

    assert rows() == sorted([("mo", person.user.pk, person.organization.pk, "usage_export", "")
                             for person in (owner, colleague)], key=str)
    assert EXPORT_WORDS in web_client(owner).get("/data/").content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("what,person_column", [("turns", "user_id"), ("ledger", "actor_id")])
def test_a_turn_started_between_the_people_and_the_rows_is_in_neither(owner, colleague, monkeypatch, what,
                                                                       person_column):
    """The people to record and the file's rows are two queries: a turn started
    between them, in a period including today, was in the file without its
    person being told (the reviewer's finding). Both read up to one moment."""
    play(owner, ScriptedClient(say("Sure.", usage=Usage(1_000, 200))), message="hi")
    reader = {"turns": "turns_people", "ledger": "ledger_people"}[what]
    read_people = getattr(exports, reader)

    def then_a_turn_starts(*args, **kwargs):
        people = read_people(*args, **kwargs)
        play(colleague, ScriptedClient(say("Sure.", usage=Usage(1_000, 200))), message="hi")
        return people

    monkeypatch.setattr(exports, reader, then_a_turn_starts)
    today = timezone.now().date()
    chosen = {"turns": {"start": today, "end": today + timedelta(days=1)},
              "ledger": {"month": f"{timezone.now():%Y-%m}"}}[what]
    client = logged_in(make_staff("mo", "assistant.view_turn", "credits.view_ledgerentry"))

    file = downloaded(client, {"what": what, "organization": "acme", "format": "csv", **chosen})

    assert colleague.user.turns.exists()  # started between the two reads
    in_file = {row[person_column] for row in csv.DictReader(io.StringIO(file))} - {""}
    assert in_file == {str(owner.user.pk)}
    assert rows() == [("mo", owner.user.pk, owner.organization.pk, "usage_export", "")]


@pytest.mark.django_db
def test_a_refused_or_invalid_export_records_nothing(activity):
    ledger_only = logged_in(make_staff("mo", "credits.view_ledgerentry"))
    assert ledger_only.get(EXPORTS, {"what": "turns", **activity, "format": "csv"}).status_code == 403
    assert ledger_only.get(EXPORTS, {"what": "usage", "format": "csv"}).status_code == 400  # no organization
    assert not StaffAccess.objects.exists()


def autocomplete(term: str) -> dict:
    return {"app_label": "assistant_organizations", "model_name": "membership", "field_name": "user", "term": term}


@pytest.mark.django_db
def test_the_user_autocomplete_records_each_person_it_shows(owner, colleague, outsider):
    """A membership's user field lists accounts matching what is typed: names
    seen, as on the accounts' list page (one row per organization of the person)."""
    client = logged_in(make_staff("mo", "auth.view_user"))

    response = client.get(AUTOCOMPLETE, autocomplete(owner.user.username))

    assert response.status_code == 200
    assert [result["text"] for result in response.json()["results"]] == [owner.user.username]
    assert rows() == [("mo", owner.user.pk, owner.organization.pk, "account", "")]
    assert "a staff member saw a list that showed some of your data" in web_client(owner).get(
        "/data/").content.decode()


@pytest.mark.django_db
def test_a_refused_autocomplete_records_nothing(owner):
    stranger = logged_in(make_staff("stranger"))
    assert stranger.get(AUTOCOMPLETE, autocomplete(owner.user.username)).status_code == 403
    assert not StaffAccess.objects.exists()

"""The staff access log: each staff view of a person's data leaves one row
(a thread, turn or card page, an export, the start of an erasure), a list page
one per person it shows; superusers read it, nobody edits it; old rows go; the person sees theirs
in the export, never who."""

import json
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from assistant.maintenance import erasure_run_batch
from assistant.maintenance_tasks import purge_staff_accesses_task
from assistant.models import ActionCard, Erasure
from assistant_engine.organizations.access_log import staff_access_record, staff_accesses_purge
from assistant_engine.organizations.models import Membership, StaffAccess
from config.celery import app
from tests.admin.conftest import logged_in, make_staff
from tests.admin.test_personal_data import ERASE, export_action, thread_with_a_card
from tests.admin.test_turns_admin import make_turn
from tests.streamed import streamed_json

pytestmark = pytest.mark.django_db

User = get_user_model()
LOG = reverse("admin:assistant_organizations_staffaccess_changelist")


def change_page(obj) -> str:
    return reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[obj.pk])


def list_page(model) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")


def rows() -> list[tuple]:
    return list(StaffAccess.objects.order_by("id").values_list(
        "staff_username", "person_id", "organization_id", "kind", "object_id"))


@pytest.fixture
def moderator(db):
    return make_staff("mo", "conversations.view_thread", "assistant.view_turn", "assistant.view_actioncard")


# --- One row per object opened, none per listing row --------------------------------


@pytest.mark.parametrize("kind", ["conversation", "turn", "card"])
def test_opening_a_persons_object_records_one_row(moderator, owner, outsider, kind):
    thread = thread_with_a_card(owner, "Trip")
    thread_with_a_card(outsider, "Other")
    make_turn(owner, thread=thread)
    make_turn(outsider)
    obj = {"conversation": thread, "turn": thread.turns.get(), "card": ActionCard.objects.get(thread=thread)}[kind]
    client = logged_in(moderator)

    listed = client.get(list_page(type(obj)))
    # The list showed both people's objects: one row each, no object opened.
    assert listed.status_code == 200 and sorted(rows()) == sorted([
        ("mo", owner.user.pk, owner.organization.pk, kind, ""),
        ("mo", outsider.user.pk, outsider.organization.pk, kind, "")])
    StaffAccess.objects.all().delete()

    opened = client.get(change_page(obj))

    assert opened.status_code == 200
    assert rows() == [("mo", owner.user.pk, owner.organization.pk, kind, str(obj.pk))]
    access = StaffAccess.objects.get()
    assert access.staff == moderator and access.path == change_page(obj)
    assert timezone.now() - access.at < timedelta(minutes=1)


def test_each_opening_is_a_row_and_a_refused_page_is_none(moderator, owner):
    thread = thread_with_a_card(owner, "Trip")
    client = logged_in(moderator)
    stranger = logged_in(make_staff("stranger"))

    client.get(change_page(thread))
    client.get(change_page(thread))
    refused = stranger.get(change_page(thread))

    assert refused.status_code == 403
    assert [row[0] for row in rows()] == ["mo", "mo"]


def test_a_turn_of_an_erased_person_is_recorded_without_a_person(root_client, owner):
    turn = make_turn(owner)
    turn.user = None
    turn.save(update_fields=["user"])

    assert root_client.get(change_page(turn)).status_code == 200

    assert rows() == [("root", None, owner.organization.pk, "turn", str(turn.pk))]


# --- Exports: recorded per organization; staff exported only by a superuser --------


def test_an_export_records_one_row_per_organization_of_the_person(owner, globex):
    Membership.objects.create(organization=globex, user=owner.user)
    officer = make_staff("officer", "auth.view_user", "assistant.export_personal_data")

    response = export_action(logged_in(officer), owner.user)

    assert response.status_code == 200 and response["Content-Disposition"].startswith("attachment;")
    assert sorted(rows()) == sorted([("officer", owner.user.pk, owner.organization.pk, "export", ""),
                                     ("officer", owner.user.pk, globex.pk, "export", "")])


@pytest.mark.parametrize("target", ["staff", "superuser"])
def test_only_a_superuser_exports_a_staff_member_or_a_superuser(owner, root, root_client, target):
    person = make_staff("sam") if target == "staff" else root
    thread_with_a_card(owner, "olivia's plans")
    officer = logged_in(make_staff("officer", "auth.view_user", "assistant.export_personal_data"))

    refused = export_action(officer, owner.user, person)
    allowed = export_action(root_client, person)

    assert "Content-Disposition" not in refused and "olivia&#x27;s plans" not in refused.content.decode()
    assert "Only a superuser" in logged_in_messages(officer)
    assert allowed.status_code == 200 and allowed["Content-Disposition"].startswith("attachment;")
    exports = [row[0] for row in rows() if row[3] == "export"]
    assert exports == ["root"]  # the refused export recorded nothing


def logged_in_messages(client) -> str:
    return client.get(reverse("admin:auth_user_changelist")).content.decode()


# --- Erasure: its start is recorded; the person then leaves their rows --------------


def test_starting_an_erasure_is_recorded_and_the_erasure_removes_the_person_from_the_log(root_client, owner,
                                                                                        colleague):
    thread = thread_with_a_card(owner, "Trip")
    root_client.get(change_page(thread))
    root_client.get(change_page(thread_with_a_card(colleague, "Colin's")))

    response = root_client.post(ERASE, {"user": owner.user.pk, "confirm": "on"})

    erasure = Erasure.objects.get()
    assert response.status_code == 302
    assert rows()[-1] == ("root", owner.user.pk, owner.organization.pk, "erasure", str(erasure.pk))
    while erasure_run_batch(erasure.pk, batch_size=2) is not None:
        pass
    assert [(row[1], row[3]) for row in rows()] == [(None, "conversation"), (colleague.user.pk, "conversation"),
                                                    (None, "erasure")]
    assert [row[0] for row in rows()] == ["root"] * 3  # the staff trace stays


# --- The log in the admin: superusers read it, nobody writes it --------------------


def test_superusers_read_the_log_and_nobody_adds_changes_or_deletes(root_client, owner):
    access = staff_access_record(staff=owner.user, kind="conversation", person_id=owner.user.pk,
                                 organization_id=owner.organization.pk, object_id="x", path="/admin/x/")

    listed, shown = root_client.get(LOG), root_client.get(change_page(access))
    add = root_client.get(reverse("admin:assistant_organizations_staffaccess_add"))
    changed = root_client.post(change_page(access), {"kind": "export", "staff_username": "nobody"})
    delete = reverse("admin:assistant_organizations_staffaccess_delete", args=[access.pk])
    deleted = root_client.post(delete, {"post": "yes"})

    assert (listed.status_code, shown.status_code) == (200, 200) and "olivia" in listed.content.decode()
    assert (add.status_code, changed.status_code, deleted.status_code) == (403, 403, 403)
    assert rows() == [("olivia", owner.user.pk, owner.organization.pk, "conversation", "x")]
    assert StaffAccess.objects.count() == 1  # reading the log is not itself a person's data


def test_staff_who_are_not_superusers_do_not_see_the_log(owner):
    access = staff_access_record(staff=owner.user, kind="export", person_id=owner.user.pk,
                                 organization_id=owner.organization.pk, path="/admin/")
    every_permission = [f"assistant_organizations.{verb}_staffaccess" for verb in ("view", "add", "change", "delete")]
    auditor = logged_in(make_staff("auditor", *every_permission))

    assert auditor.get(LOG).status_code == 403
    assert auditor.get(change_page(access)).status_code == 403
    assert "staff access" not in auditor.get(reverse("admin:index")).content.decode().lower()


def test_a_row_is_never_changed(owner):
    access = staff_access_record(staff=owner.user, kind="export", person_id=owner.user.pk,
                                 organization_id=owner.organization.pk, path="/admin/")
    access.kind = "card"

    with pytest.raises(ValueError, match="append-only"):
        access.save()

    assert StaffAccess.objects.get().kind == "export"


# --- Retention ------------------------------------------------------------------------


def aged(owner, days: float) -> StaffAccess:
    access = staff_access_record(staff=owner.user, kind="export", person_id=owner.user.pk,
                                 organization_id=owner.organization.pk, path="/admin/")
    StaffAccess.objects.filter(pk=access.pk).update(at=timezone.now() - timedelta(days=days))
    return access


def test_the_retention_job_deletes_rows_past_the_setting_in_batches(owner, settings, django_assert_num_queries):
    settings.STAFF_ACCESS_RETENTION_DAYS = 30
    for _ in range(5):
        aged(owner, 31)
    kept = [aged(owner, 29), aged(owner, 0)]

    # 3 batches of 2 (select, delete), then the select that finds none;
    # a transaction (savepoint and release, in the test's) around each.
    with django_assert_num_queries(4 * 3 + 3):
        deleted = staff_accesses_purge(batch_size=2)

    assert deleted == 5
    assert list(StaffAccess.objects.order_by("id")) == kept


def test_the_retention_defaults_to_two_years_and_runs_daily_from_beat(owner):
    old, recent = aged(owner, 731), aged(owner, 729)

    assert purge_staff_accesses_task.apply().get() == 1

    assert list(StaffAccess.objects.all()) == [recent] and old.pk != recent.pk
    [entry] = [e for e in app.conf.beat_schedule.values() if e["task"] == "assistant.purge_staff_accesses"]
    assert entry["schedule"] == 24 * 3600 and "assistant.purge_staff_accesses" in app.tasks


# --- The person's export: their rows, never who ----------------------------------


def test_the_persons_export_lists_their_staff_accesses_without_the_staff_member(root_client, owner, colleague,
                                                                               outsider):
    thread = thread_with_a_card(owner, "Trip")
    root_client.get(change_page(thread))
    root_client.get(change_page(thread_with_a_card(colleague, "Colin's")))
    export_action(root_client, owner.user)

    mine = owner.client.get("/api/me/export")
    colleagues = streamed_json(colleague.client.get("/api/me/export"))["staffAccesses"]
    outsiders = streamed_json(outsider.client.get("/api/me/export"))["staffAccesses"]

    assert mine.status_code == 200
    accesses = streamed_json(mine)["staffAccesses"]
    assert [(a["what"], a["objectId"]) for a in accesses] == [("export", None), ("conversation", str(thread.pk))]
    assert all(set(a) == {"at", "what", "objectId"} for a in accesses)
    assert accesses[1]["at"] == StaffAccess.objects.get(object_id=str(thread.pk)).at.isoformat()
    assert "root" not in json.dumps(accesses)
    assert [a["what"] for a in colleagues] == ["conversation"] and outsiders == []


def test_the_export_of_a_person_in_another_organization_holds_only_that_organizations_rows(root_client, owner,
                                                                                          globex):
    Membership.objects.create(organization=globex, user=owner.user)
    root_client.get(change_page(thread_with_a_card(owner, "Trip")))

    browser = APIClient()  # a token acts in its own organization only: a session may switch by header
    browser.force_login(owner.user)
    response = browser.get("/api/me/export", HTTP_X_ORGANIZATION="globex")

    assert response.status_code == 200 and streamed_json(response)["staffAccesses"] == []


def test_anonymous_gets_no_export(anonymous):
    assert anonymous.get("/api/me/export").status_code == 401


def test_erasing_a_staff_member_keeps_their_trace_by_username_in_batches(owner, colleague):
    from assistant_engine.organizations.personal_data import erase_user

    staff = make_staff("sam")
    for _ in range(3):
        staff_access_record(staff=staff, kind="export", person_id=owner.user.pk,
                            organization_id=owner.organization.pk, path="/admin/")
    staff_access_record(staff=colleague.user, kind="export", person_id=staff.pk, organization_id=None,
                        path="/admin/")

    progress = [erase_user(staff, batch_size=2) for _ in range(3)]

    assert [p.counts.get("staff_accesses") for p in progress] == [2, 2, 0] and progress[-1].done
    assert sorted(rows()) == [("colin", None, None, "export", "")] + [
        ("sam", owner.user.pk, owner.organization.pk, "export", "")] * 3
    assert not StaffAccess.objects.filter(staff__isnull=False).exclude(staff=colleague.user).exists()


def log_rows_in_organizations(staff, count: int, start_index: int = 0) -> None:
    """An access in each of `count` new organizations, over the same three months
    (the drill-down probes periods, at most 31 a page: the same periods at both sizes)."""
    from assistant_engine.organizations.models import Organization

    for index in range(start_index, start_index + count):
        organization = Organization.objects.create(slug=f"tenant-{index}", name=f"Tenant {index}")
        access = staff_access_record(staff=staff, kind="export", person_id=None, organization_id=organization.pk,
                                     path="/admin/")
        StaffAccess.objects.filter(pk=access.pk).update(at=timezone.now() - timedelta(days=30 * (index % 3)))


@pytest.mark.parametrize("page", [LOG, f"{LOG}?at__year={timezone.now().year}"])
def test_the_logs_page_costs_the_same_queries_at_3_and_30_organizations(root, root_client, page):
    """No DISTINCT over every row for the date drill-down, no organization filter
    listing every organization, no second whole-table COUNT (the other admin lists' fixes)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries() -> list[str]:
        with CaptureQueriesContext(connection) as captured:
            assert root_client.get(page).status_code == 200
        return [query["sql"] for query in captured]

    log_rows_in_organizations(root, 3)
    small = queries()
    log_rows_in_organizations(root, 27, start_index=3)
    large = queries()

    assert len(large) == len(small), "\n".join(large)
    assert not [sql for sql in large if "DISTINCT" in sql.upper()]
    assert not [sql for sql in large if 'FROM "assistant_organizations_organization"' in sql and "WHERE" not in sql]

"""Suspending a member: 403 membership_suspended in the one guard (API and
pages), no turn starts, a running turn finishes, lifting restores access,
their data stays; by staff (admin) or an organization admin."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from assistant.loop import TurnRunner, run_turn
from assistant.models import Turn
from assistant_engine.organizations.members import MembershipSuspended, resolve_member
from assistant_engine.organizations.models import Membership, OrganizationChange
from assistant_engine.organizations.services import CannotSuspendSelf, member_restore, member_suspend
from assistant_engine.providers.clients.base import Usage
from conversations.models import Thread
from credits.models import LedgerEntry
from tests.admin.conftest import logged_in
from tests.assistant.conftest import Clock, submit
from tests.conftest import make_person
from tests.fakes.scripted import ScriptedClient, call, say

SUSPENDED = {"code": "membership_suspended",
             "detail": "Your membership in this organization is suspended; ask its administrators."}


@pytest.fixture
def admin(acme):
    return make_person("ada", acme, role="admin")


def suspend(person, reason="Left the team"):
    Membership.objects.filter(user=person.user, organization=person.organization).update(
        suspended_at=timezone.now(), suspended_reason=reason)


def test_a_suspended_members_api_requests_get_403_membership_suspended(owner, colleague):
    assert owner.client.post("/api/chat", {"message": "hi"}, format="json").status_code == 202
    suspend(owner)

    listing = owner.client.get("/api/conversations")
    sent = owner.client.post("/api/chat", {"message": "again"}, format="json")

    assert (listing.status_code, listing.json()) == (403, SUSPENDED)
    assert (sent.status_code, sent.json()) == (403, SUSPENDED)
    assert Turn.objects.filter(user=owner.user).count() == 1
    # The colleague of the same organization is not affected; the data stays.
    assert colleague.client.get("/api/conversations").status_code == 200
    assert Thread.objects.filter(user=owner.user).count() == 1


def test_the_suspension_is_per_organization(owner, globex):
    Membership.objects.create(organization=globex, user=owner.user)
    suspend(owner)
    session = APIClient()  # a session names its organization in the header
    session.force_login(owner.user)

    in_globex = session.get("/api/conversations", HTTP_X_ORGANIZATION="globex")
    in_acme = session.get("/api/conversations", HTTP_X_ORGANIZATION="acme")

    assert (in_globex.status_code, in_acme.status_code) == (200, 403)
    assert in_acme.json() == SUSPENDED


def test_a_token_of_a_suspended_membership_is_refused_too(owner, globex):
    Membership.objects.create(organization=globex, user=owner.user)
    suspend(owner)  # in Acme, the token's organization

    response = owner.client.get("/api/conversations")

    assert (response.status_code, response.json()) == (403, SUSPENDED)


def test_the_guard_itself_refuses_so_every_door_inherits_it(owner):
    suspend(owner)
    with pytest.raises(MembershipSuspended):
        resolve_member(owner.user, None)
    with pytest.raises(MembershipSuspended):
        resolve_member(owner.user, "acme")


def test_a_suspended_member_sees_a_403_page_in_the_browser(owner):
    browser = Client()
    browser.force_login(owner.user)
    suspend(owner)

    page = browser.get("/")

    assert page.status_code == 403 and b"Your membership is suspended" in page.content


def test_another_organization_is_offered_only_to_people_who_have_one(owner, globex):
    """Once "Work in another of your organizations" to everyone suspended."""
    browser = Client()
    browser.force_login(owner.user)
    suspend(owner)
    alone = browser.get("/").content.decode()
    assert "Your membership is suspended" in alone and "another of your organizations" not in alone

    Membership.objects.create(organization=globex, user=owner.user)
    browser.post("/organizations/", {"organization": "acme"})  # the suspended one, chosen
    elsewhere = browser.get("/").content.decode()
    assert "Your membership is suspended" in elsewhere
    assert "another of your organizations" in elsewhere


def test_one_organization_is_not_called_several(owner):
    browser = Client()
    browser.force_login(owner.user)
    html = browser.get("/organizations/").content.decode()
    assert "You belong to one organization" in html and "several organizations" not in html


def test_lifting_the_suspension_restores_access(owner, admin):
    suspend(owner)
    member_restore(admin.member, user_id=owner.user.id)

    assert owner.client.get("/api/conversations").status_code == 200


def test_a_turn_queued_before_the_suspension_does_not_start(owner):
    turn = submit(owner)
    suspend(owner)
    client = ScriptedClient(say("never"))

    run_turn(turn.id, client=client, clock=Clock())

    turn.refresh_from_db()
    assert client.requests == []
    assert turn.status == Turn.Status.FAILED and turn.failure_kind == Turn.FailureKind.SUSPENDED
    settle = LedgerEntry.objects.get(turn_id=turn.id, kind="settle")
    assert settle.used_delta == 0 and settle.reserved_delta == -turn.reserved_micros


def test_a_running_turn_finishes_when_its_person_is_suspended_meanwhile(owner, monkeypatch):
    turn = submit(owner)
    run_calls = TurnRunner._run_calls

    def suspended_between_steps(runner, reply, calls):
        suspend(owner)  # in the worker's thread, while the turn runs
        return run_calls(runner, reply, calls)

    monkeypatch.setattr(TurnRunner, "_run_calls", suspended_between_steps)
    client = ScriptedClient(call(("search_notes", {"query": "x"}), usage=Usage(100, 20)),
                            say("Done.", usage=Usage(100, 20)))
    run_turn(turn.id, client=client, clock=Clock())

    turn.refresh_from_db()
    assert turn.status == Turn.Status.DONE and len(client.requests) == 2
    assert Membership.objects.get(user=owner.user).is_suspended


def test_an_organization_admin_suspends_and_restores_a_member_with_a_reason(owner, admin):
    member_suspend(admin.member, user_id=owner.user.id, reason="Contract ended")

    membership = Membership.objects.get(user=owner.user)
    assert membership.is_suspended and membership.suspended_reason == "Contract ended"
    member_restore(admin.member, user_id=owner.user.id)
    changes = list(OrganizationChange.objects.order_by("id").values_list("action", "detail", "actor_username"))
    assert changes == [("member_suspended", "olivia: Contract ended", "ada"), ("member_restored", "olivia", "ada")]


def test_only_an_admin_of_the_same_organization_suspends(owner, colleague, admin, outsider, globex):
    globex_admin = make_person("gus", globex, role="admin")
    with pytest.raises(Membership.DoesNotExist):
        member_suspend(colleague.member, user_id=owner.user.id, reason="no")  # not an admin
    with pytest.raises(Membership.DoesNotExist):
        member_suspend(globex_admin.member, user_id=owner.user.id, reason="no")  # another organization
    with pytest.raises(Membership.DoesNotExist):
        member_suspend(admin.member, user_id=outsider.user.id, reason="no")  # not in the admin's organization
    with pytest.raises(CannotSuspendSelf):
        member_suspend(admin.member, user_id=admin.user.id, reason="no")
    with pytest.raises(ValueError, match="needs a reason"):
        member_suspend(admin.member, user_id=owner.user.id, reason="  ")
    assert not Membership.objects.filter(suspended_at__isnull=False).exists()


def test_staff_suspend_and_lift_in_the_admin(owner):
    staff = logged_in(get_user_model().objects.create_superuser("root", "root@example.com", "pw-root"))
    membership = Membership.objects.get(user=owner.user)
    url = f"/admin/assistant_organizations/membership/{membership.pk}/change/"
    form = {"user": owner.user.pk, "organization": owner.organization.pk, "role": "member",
            "monthly_cap_credits": "", "suspended_reason": ""}

    refused = staff.post(url, {**form, "suspended": "on"})
    assert refused.status_code == 200 and b"A suspension needs a reason." in refused.content

    assert staff.post(url, {**form, "suspended": "on", "suspended_reason": "Abuse report"}).status_code == 302
    assert owner.client.get("/api/conversations").status_code == 403

    assert staff.post(url, form).status_code == 302
    assert owner.client.get("/api/conversations").status_code == 200
    actions = list(OrganizationChange.objects.order_by("id").values_list("action", "actor_username"))
    assert actions == [("member_suspended", "root"), ("member_restored", "root")]

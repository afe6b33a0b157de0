"""API tokens that can no longer act are deleted: expired ones by the hourly
purge (knox deletes one only when it is presented again), and a person's
tokens in an organization when their membership there is removed (the
admin's doors, a cascade) or moved to another person or organization — so
that adding the person again never brings an old token back. A suspension
keeps them (lifting it restores access)."""

import logging
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from assistant_engine.foundation.broker_folders import ensure_broker_folders
from assistant_engine.organizations.members import Member
from assistant_engine.organizations.models import ApiToken, Membership
from assistant_engine.organizations.services import member_add, membership_lift, membership_suspend
from assistant_engine.organizations.tasks import purge_expired_tokens_task
from assistant_engine.organizations.tokens import create_token, expired_tokens_purge
from config.celery import app as celery_app
from tests.admin.conftest import logged_in
from tests.workers import celery_worker, wait_until

CREDITS_URL = "/api/credits"


def token_of(person, *, expired: bool = False, organization=None) -> ApiToken:
    """A token of `person` (in their organization unless another is named),
    expired a minute ago or living its default days."""
    organization = organization or person.organization
    member = Member(organization.id, person.user.id, "member", organization.slug)
    row, _ = create_token(member)
    if expired:
        ApiToken.objects.filter(pk=row.pk).update(expiry=timezone.now() - timedelta(minutes=1))
    return row


def digests() -> set[str]:
    return set(ApiToken.objects.values_list("pk", flat=True))


# --- The purge of expired tokens -------------------------------------------------


@pytest.mark.django_db
def test_the_purge_deletes_expired_tokens_and_keeps_live_ones(owner, colleague, outsider, caplog):
    expired = {token_of(owner, expired=True).pk, token_of(colleague, expired=True).pk,
               token_of(outsider, expired=True).pk}
    live = digests() - expired  # each person's own token of the fixture, and:
    live.add(token_of(owner).pk)
    caplog.set_level(logging.INFO, logger="assistant_engine.organizations.tokens")

    assert expired_tokens_purge() == 3

    assert digests() == live
    [line] = [r for r in caplog.records if r.getMessage() == "job_finished"]
    assert (line.job, line.deleted, line.batches) == ("purge_expired_tokens", 3, 1)
    # Counts only: never a token, its digest or its start.
    assert not any(value in caplog.text for value in expired)
    assert owner.token[:15] not in caplog.text


@pytest.mark.django_db
def test_a_token_is_purged_once_its_expiry_has_passed_not_before(owner):
    row = ApiToken.objects.get(user=owner.user)  # the fixture's: the only token
    assert expired_tokens_purge(now=row.expiry) == 0
    assert expired_tokens_purge(now=row.expiry + timedelta(seconds=1)) == 1
    assert not ApiToken.objects.filter(pk=row.pk).exists()


@pytest.mark.django_db
def test_a_token_without_an_expiry_is_kept(owner):
    ApiToken.objects.filter(user=owner.user).update(expiry=None)
    assert expired_tokens_purge(now=timezone.now() + timedelta(days=10_000)) == 0
    assert owner.client.get(CREDITS_URL).status_code == 200


@pytest.mark.django_db(transaction=True)
def test_the_purge_deletes_in_batches_one_transaction_each(owner, caplog, django_assert_num_queries):
    for _ in range(5):
        token_of(owner, expired=True)
    caplog.set_level(logging.INFO, logger="assistant_engine.organizations.tokens")

    # Three batches (2, 2, 1), each BEGIN, the digests, DELETE, COMMIT; then
    # the empty read that ends it, in its own BEGIN … COMMIT.
    with django_assert_num_queries(3 * 4 + 3):
        assert expired_tokens_purge(batch_size=2) == 5

    [line] = [r for r in caplog.records if r.getMessage() == "job_finished"]
    assert (line.deleted, line.batches) == (5, 3)
    assert ApiToken.objects.filter(user=owner.user).count() == 1  # the fixture's live token
    assert expired_tokens_purge(batch_size=2) == 0


@pytest.mark.django_db
def test_the_batch_size_is_a_setting(owner, settings):
    settings.API_TOKEN_PURGE_BATCH_SIZE = 1
    for _ in range(3):
        token_of(owner, expired=True)
    assert purge_expired_tokens_task.apply().get() == 3
    assert ApiToken.objects.filter(user=owner.user).count() == 1


def test_the_purge_is_scheduled_hourly_and_the_worker_knows_it():
    celery_app.loader.import_default_modules()
    [entry] = [e for e in celery_app.conf.beat_schedule.values() if e["task"] == "assistant.purge_expired_tokens"]
    assert entry["schedule"] == 3600 and entry["options"] == {"expires": 3600}
    assert "assistant.purge_expired_tokens" in celery_app.tasks


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_runs_the_purge_published_by_name_as_beat_does(owner, outsider):
    expired, live = token_of(owner, expired=True), token_of(outsider)
    [entry] = [e for e in celery_app.conf.beat_schedule.values() if e["task"] == "assistant.purge_expired_tokens"]

    with celery_worker(name="token-purge"):
        ensure_broker_folders()
        celery_app.send_task(entry["task"], **entry["options"])
        wait_until(lambda: not ApiToken.objects.filter(pk=expired.pk).exists(), timeout=60)

    assert ApiToken.objects.filter(pk=live.pk).exists()


# --- Removal from an organization ------------------------------------------------


@pytest.fixture
def root(db):
    return get_user_model().objects.create_superuser("root", "root@example.com", "pw-root")


@pytest.fixture
def in_both(owner, colleague, globex):
    """The owner is also a member of globex, with a token there; the colleague
    holds a second token in acme."""
    Membership.objects.create(organization=globex, user=owner.user)
    token_of(owner)
    token_of(colleague)
    owner_acme = set(ApiToken.objects.filter(user=owner.user).values_list("pk", flat=True))
    return {"owner_acme": owner_acme, "owner_globex": token_of(owner, organization=globex).pk,
            "colleague": set(ApiToken.objects.filter(user=colleague.user).values_list("pk", flat=True))}


@pytest.mark.django_db
def test_removing_a_member_deletes_their_tokens_in_that_organization_only(owner, colleague, outsider, in_both):
    before = digests()

    Membership.objects.get(user=owner.user, organization=owner.organization).delete()

    assert digests() == before - in_both["owner_acme"]
    assert in_both["owner_globex"] in digests() and in_both["colleague"] <= digests()
    assert owner.client.get(CREDITS_URL).status_code == 401
    assert colleague.client.get(CREDITS_URL).status_code == 200
    assert outsider.client.get(CREDITS_URL).status_code == 200


@pytest.mark.django_db
def test_a_person_added_again_does_not_get_their_old_token_back(owner, acme):
    Membership.objects.get(user=owner.user).delete()
    member_add(organization=acme, username=owner.user.username)

    assert owner.client.get(CREDITS_URL).status_code == 401
    assert not ApiToken.objects.filter(user=owner.user).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("door", ["delete page", "bulk action", "organization inline"])
def test_staff_removing_a_member_in_the_admin_deletes_their_tokens_there(owner, colleague, in_both, root, door):
    staff = logged_in(root)
    membership = Membership.objects.get(user=owner.user, organization=owner.organization)
    if door == "delete page":
        response = staff.post(f"/admin/assistant_organizations/membership/{membership.pk}/delete/", {"post": "yes"})
    elif door == "bulk action":
        response = staff.post("/admin/assistant_organizations/membership/", {
            "action": "delete_selected", "_selected_action": [membership.pk], "post": "yes"})
    else:
        response = staff.post(f"/admin/assistant_organizations/organization/{owner.organization.pk}/change/",
                              organization_form(owner.organization, delete=membership))

    assert response.status_code == 302, response.content[-3000:]
    assert not Membership.objects.filter(pk=membership.pk).exists()
    assert not digests() & in_both["owner_acme"]
    assert in_both["owner_globex"] in digests() and in_both["colleague"] <= digests()


def organization_form(organization, *, delete: Membership) -> dict:
    """The organization's change form as the admin renders it, with the
    inline row of `delete` ticked for deletion."""
    rows = list(Membership.objects.filter(organization=organization).order_by("organization__name", "pk"))
    form = {"name": organization.name, "slug": organization.slug, "monthly_credits": organization.monthly_credits,
            "default_member_cap_credits": "",
            "memberships-TOTAL_FORMS": len(rows), "memberships-INITIAL_FORMS": len(rows),
            "memberships-MIN_NUM_FORMS": 0, "memberships-MAX_NUM_FORMS": 1000,
            "changes-TOTAL_FORMS": 0, "changes-INITIAL_FORMS": 0,
            "changes-MIN_NUM_FORMS": 0, "changes-MAX_NUM_FORMS": 1000}
    for index, row in enumerate(rows):
        form |= {f"memberships-{index}-id": row.pk, f"memberships-{index}-organization": organization.pk,
                 f"memberships-{index}-user": row.user_id, f"memberships-{index}-role": row.role}
        if row.pk == delete.pk:
            form[f"memberships-{index}-DELETE"] = "on"
    return form


@pytest.mark.django_db
def test_a_membership_moved_to_another_organization_in_the_admin_loses_its_old_tokens(owner, colleague, globex,
                                                                                     root):
    old_tokens = set(ApiToken.objects.filter(user=owner.user).values_list("pk", flat=True))
    membership = Membership.objects.get(user=owner.user)
    form = {"user": owner.user.pk, "organization": globex.pk, "role": "member", "monthly_cap_credits": "",
            "suspended_reason": ""}

    response = logged_in(root).post(f"/admin/assistant_organizations/membership/{membership.pk}/change/", form)

    assert response.status_code == 302
    assert Membership.objects.get(pk=membership.pk).organization_id == globex.pk
    assert not digests() & old_tokens
    assert colleague.client.get(CREDITS_URL).status_code == 200


@pytest.mark.django_db
def test_a_suspension_keeps_the_tokens_and_lifting_it_restores_them(owner, colleague):
    membership = Membership.objects.get(user=owner.user)
    before = digests()

    membership_suspend(membership=membership, reason="Investigating", actor_id=None)

    assert digests() == before
    assert owner.client.get(CREDITS_URL).json()["code"] == "membership_suspended"
    membership_lift(membership=membership, actor_id=None)
    assert owner.client.get(CREDITS_URL).status_code == 200


@pytest.mark.django_db
def test_saving_a_membership_that_stays_put_keeps_its_tokens(owner, root, acme):
    membership = Membership.objects.get(user=owner.user)
    form = {"user": owner.user.pk, "organization": acme.pk, "role": "admin", "monthly_cap_credits": "5",
            "suspended_reason": ""}
    before = digests()

    change = f"/admin/assistant_organizations/membership/{membership.pk}/change/"
    assert logged_in(root).post(change, form).status_code == 302

    assert digests() == before and Membership.objects.get(pk=membership.pk).role == "admin"

"""The product's guard (ASSISTANT_MEMBER_RESOLVER, organizations/tenants.py):
the product says who the person is and in which of its tenants; the engine
keeps an organization per tenant, made on first use, and re-checks every
object against that person as in its own mode."""

import threading

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.test import Client, override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from assistant_engine.organizations.members import Member
from assistant_engine.organizations.models import Membership, Organization
from assistant_engine.organizations.tenants import tenant_organization
from assistant_engine.organizations.tokens import create_token
from conversations.models import Thread

pytestmark = [pytest.mark.django_db(transaction=False)]

RESOLVER = "tests.kit.resolver.resolve_member"


@pytest.fixture(autouse=True)
def product_guard():
    with override_settings(ASSISTANT_MEMBER_RESOLVER=RESOLVER, ASSISTANT_DEFAULT_MONTHLY_CREDITS=250):
        yield


def shopper(email: str, store: str = "s-1:Corner Shop", *, staff: bool = False):
    user = get_user_model().objects.create_user(username=email, password="pw", is_staff=staff)
    if store:
        user.groups.add(Group.objects.get_or_create(name=f"store:{store}")[0])
    return user


def own_thread(user) -> Thread:
    membership = Membership.objects.get(user=user)
    now = timezone.now()
    return Thread.objects.create(organization_id=membership.organization_id, user=user, title="Orders",
                                 created_at=now, updated_at=now, last_activity_at=now)


def signed_in(user, client_class=APIClient):
    client = client_class()
    client.force_login(user)
    return client


def test_a_tenants_first_use_makes_its_organization_with_the_default_credits_and_the_membership():
    alice = shopper("alice@example.com", staff=True)
    response = signed_in(alice).get("/api/conversations")
    assert response.status_code == 200, response.content
    organization = Organization.objects.get(tenant_key="s-1")
    assert (organization.name, organization.monthly_credits) == ("Corner Shop", 250)
    assert organization.slug.startswith("corner-shop-")
    membership = Membership.objects.get(organization=organization)
    assert (membership.user_id, membership.role) == (alice.pk, Membership.Role.ADMIN)

    bob = shopper("bob@example.com")
    assert signed_in(bob).get("/api/credits").status_code == 200
    assert Organization.objects.filter(tenant_key="s-1").count() == 1
    assert Membership.objects.get(user=bob).role == Membership.Role.MEMBER


def test_the_product_is_the_source_of_the_role_and_the_tenants_name():
    carol = shopper("carol@example.com")
    client = signed_in(carol)
    assert client.get("/api/credits").status_code == 200
    carol.is_staff = True
    carol.save()
    Group.objects.filter(name="store:s-1:Corner Shop").update(name="store:s-1:Corner Shop & Co")
    assert client.get("/api/credits").status_code == 200
    membership = Membership.objects.select_related("organization").get(user=carol)
    assert (membership.role, membership.organization.name) == (Membership.Role.ADMIN, "Corner Shop & Co")


def test_not_a_member_is_403_on_the_api_and_the_products_login_on_pages():
    loner = shopper("loner@example.com", store="")
    response = signed_in(loner).get("/api/conversations")
    assert (response.status_code, response.json()["code"]) == (403, "not_a_member")
    page = signed_in(loner, Client).get("/data/")
    assert page.status_code == 302 and page["Location"].startswith("/login/?next=/data/")
    assert APIClient().get("/api/conversations").status_code == 401
    assert not Organization.objects.filter(tenant_key__isnull=False).exists()


def test_another_tenants_conversation_is_not_found_and_a_colleagues_too():
    alice, bob = shopper("alice@example.com"), shopper("bob@example.com")
    eve = shopper("eve@example.com", store="s-2:Other Shop")
    assert signed_in(alice).get("/api/credits").status_code == 200  # the tenant's first use
    thread = own_thread(alice)
    path = f"/api/conversations/{thread.id}"
    assert signed_in(alice).get(path).status_code == 200
    assert signed_in(bob).get(path).status_code == 404  # a colleague: the conversation is Alice's
    assert signed_in(eve).get(path).status_code == 404  # another tenant
    assert APIClient().get(path).status_code == 401
    assert thread.organization.tenant_key == "s-1"


def test_the_member_carries_the_products_tenant_key_and_the_user():
    from assistant_engine.organizations.tenants import product_member

    alice = shopper("alice@example.com")
    request = type("Request", (), {"user": alice})()
    member = product_member(request)
    assert isinstance(member, Member)
    assert (member.tenant, member.user_id, member.is_admin) == ("s-1", alice.pk, False)


def test_an_api_token_made_in_the_products_mode_acts_in_its_tenant_only():
    alice = shopper("alice@example.com")
    eve = shopper("eve@example.com", store="s-2:Other Shop")
    assert signed_in(alice).get("/api/credits").status_code == 200
    membership = Membership.objects.select_related("organization").get(user=alice)
    member = Member(organization_id=membership.organization_id, user_id=alice.pk, role=membership.role,
                    organization_slug=membership.organization.slug)
    _, token = create_token(member)
    by_token = APIClient()
    by_token.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    thread = own_thread(alice)
    assert by_token.get(f"/api/conversations/{thread.id}").status_code == 200
    assert signed_in(eve).get(f"/api/conversations/{thread.id}").status_code == 404


def test_a_resolver_answering_nonsense_is_the_products_bug_said_clearly():
    alice = shopper("alice@example.com")
    with override_settings(ASSISTANT_MEMBER_RESOLVER="tests.kit.resolver.broken_resolver"), \
            pytest.raises(ImproperlyConfigured, match="non-empty string 'tenant'"):
        signed_in(alice).get("/api/credits")


@pytest.mark.django_db(transaction=True)
def test_two_first_requests_at_once_make_one_organization():
    if connection.vendor != "postgresql":
        pytest.skip("concurrent writers need PostgreSQL")
    barrier, made, errors = threading.Barrier(4), [], []

    def first_use():
        try:
            barrier.wait()
            made.append(tenant_organization("s-9", "Busy Shop").pk)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=first_use) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(set(made)) == 1 and Organization.objects.filter(tenant_key="s-9").count() == 1

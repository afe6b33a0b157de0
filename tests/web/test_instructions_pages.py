"""The instructions pages (issue 25.2): the person's own, and the
organization's on its page (admins only); both bounded at 4,000 characters."""

import pytest

from assistant_engine.organizations.models import Membership, Organization, OrganizationChange
from tests.conftest import make_person
from tests.web.conftest import web_client


@pytest.fixture
def admin_web(acme):
    return web_client(make_person("ada", acme, role="admin"))


def test_the_person_saves_their_own_instructions(owner, owner_web, colleague_web):
    page = owner_web.get("/instructions/")
    assert page.status_code == 200 and b"At most 4000 characters" in page.content
    response = owner_web.post("/instructions/", {"instructions": "Call me Olivia."})
    assert response.status_code == 302
    assert Membership.objects.get(user=owner.user).instructions == "Call me Olivia."
    assert "Call me Olivia." in owner_web.get("/instructions/").content.decode()
    assert "Call me Olivia." not in colleague_web.get("/instructions/").content.decode()


def test_too_long_instructions_are_refused_and_kept_as_they_were(owner, owner_web):
    response = owner_web.post("/instructions/", {"instructions": "x" * 4001})
    assert response.status_code == 400 and b"limited to 4,000 characters" in response.content
    assert Membership.objects.get(user=owner.user).instructions == ""


def test_anonymous_is_sent_to_log_in(client):
    response = client.get("/instructions/")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_an_admin_sets_the_organizations_instructions_on_its_page(acme, admin_web, owner_web, outsider):
    assert b"organization-instructions" in admin_web.get("/organization/").content
    response = admin_web.post("/organization/instructions", {"instructions": "Sign with Acme."})
    assert response.status_code == 302
    assert Organization.objects.get(pk=acme.pk).instructions == "Sign with Acme."
    assert OrganizationChange.objects.filter(organization=acme, action="instructions").count() == 1
    assert "Sign with Acme." in owner_web.get("/instructions/").content.decode()
    assert "Sign with Acme." not in web_client(outsider).get("/instructions/").content.decode()


def test_a_member_cant_set_the_organizations_instructions(acme, owner_web):
    assert owner_web.post("/organization/instructions", {"instructions": "Mine."}).status_code == 404
    assert Organization.objects.get(pk=acme.pk).instructions == ""


def test_the_organizations_instructions_are_bounded(acme, admin_web):
    response = admin_web.post("/organization/instructions", {"instructions": "x" * 4001})
    assert response.status_code == 400
    assert Organization.objects.get(pk=acme.pk).instructions == ""


def test_a_nul_in_the_organizations_instructions_is_refused_not_a_500(acme, admin_web):
    """PostgreSQL text can't hold NUL: a crafted form is a 400, as the person's own page answers."""
    response = admin_web.post("/organization/instructions", {"instructions": "Sign\x00 with Acme."})
    assert response.status_code == 400
    assert Organization.objects.get(pk=acme.pk).instructions == ""
    mine = admin_web.post("/instructions/", {"instructions": "Sign\x00 with Acme."})
    assert mine.status_code == 400
    assert Membership.objects.get(organization=acme, user__username="ada").instructions == ""


def test_an_admin_on_their_instructions_page_is_led_to_the_organizations(admin_web, owner_web):
    """Issue 34.4: an admin looking for the organization's field finds it from /instructions/."""
    page = admin_web.get("/instructions/").content.decode()
    assert 'href="/organization/#org-instructions"' in page
    assert 'id="org-instructions"' in admin_web.get("/organization/").content.decode()
    assert "data-edit-organization-instructions" not in owner_web.get("/instructions/").content.decode()

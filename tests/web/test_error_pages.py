"""Issue 34.1 and 34.8: no link the product shows ends on Django's debug page.
A deleted note's page, another person's conversation, /organization/ for a
member, an address nothing answers: the product's own page, in the person's
language, with DEBUG on as with it off. The API's errors stay JSON."""

import uuid

import pytest
from django.conf import settings as django_settings

from tests.conftest import make_person
from tests.web.conftest import web_client
from workspace.models import Note


@pytest.fixture(params=[True, False], ids=["debug", "production"])
def debug(request, settings):
    settings.DEBUG = request.param
    return request.param


def product_page(response, status=404):
    page = response.content.decode()
    assert response.status_code == status, response.status_code
    assert "URLconf" not in page and "Traceback" not in page and "technical" not in page.lower()
    assert 'class="auth-card"' in page
    return page


def test_a_deleted_notes_page_is_the_products_not_found(owner, debug):
    note = Note.objects.create(organization=owner.organization, owner=owner.user, title="Gone", body="x")
    client = web_client(owner)
    assert client.get(f"/notes/{note.id}/").status_code == 200
    note.delete()
    assert "There is nothing here, or it is not yours to see." in product_page(client.get(f"/notes/{note.id}/"))


def test_another_persons_conversation_and_an_unknown_address(owner, debug):
    client = web_client(owner)
    product_page(client.get(f"/c/{uuid.uuid4()}/"))
    product_page(client.get("/no-such-page/"))


def test_a_member_opening_the_organization_page(acme, debug):
    product_page(web_client(make_person("mia", acme)).get("/organization/"))


def test_in_the_persons_language(owner, debug):
    client = web_client(owner)
    client.cookies[django_settings.LANGUAGE_COOKIE_NAME] = "de"
    assert "Nicht gefunden" in product_page(client.get(f"/c/{uuid.uuid4()}/"))


def test_the_apis_not_found_stays_json(owner, debug):
    response = owner.client.get(f"/api/conversations/{uuid.uuid4()}")
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_the_offline_model_is_named_once_in_the_model_menus(owner, acme, settings):
    """Issue 34.6: "Offline demo model · Offline demo model" in the chat's and the organization's menus."""
    from html import unescape

    from tests.web.conftest import web_client as client_of

    settings.DEBUG = False
    admin = client_of(make_person("ada", acme, role="admin"))
    for page in (admin.get("/").content.decode(), admin.get("/organization/").content.decode()):
        text = unescape(page)
        assert "Offline demo model · Offline demo model" not in text
        assert "Offline demo model — Offline demo model" not in text
        assert "Offline demo model Offline demo model" not in " ".join(text.split())

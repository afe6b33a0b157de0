"""Issue 34.12: the chlova seed's "last 20 messages" window is an organization's
choice on its page (/organization/, "Long conversations"): its admin makes it,
it persists and is logged; a member gets 404 and changes nothing; another
organization's admin changes only theirs; anonymous is sent to log in."""

from html import unescape

from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from assistant_engine.organizations.models import Organization, OrganizationChange
from tests.conftest import make_person
from tests.web.conftest import web_client

URL = "/organization/history-mode"
SENTENCE = "ada chose to send the assistant only the last 20 messages of each conversation"


def queries_of_the_page(client) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get("/organization/").status_code == 200
    return len(captured)


def test_the_admin_chooses_the_last_20_messages_and_it_is_kept_and_logged(acme):
    admin = web_client(make_person("ada", acme, role="admin"))
    page = unescape(admin.get("/organization/").content.decode())
    assert '<option value="last">Read only the last 20 messages, whatever the conversation\'s length' in page
    assert admin.post(URL, {"mode": "last"}).status_code == 302
    assert Organization.objects.get(pk=acme.pk).history_mode == "last"
    change = OrganizationChange.objects.get(organization=acme, action=OrganizationChange.Kind.HISTORY_MODE)
    assert (change.detail, change.actor_username) == ("last", "ada")
    page = unescape(admin.get("/organization/").content.decode())
    assert '<option value="last" selected>' in page and SENTENCE in page


def test_the_choice_costs_the_page_no_query(acme):
    admin = web_client(make_person("ada", acme, role="admin"))
    admin.get("/organization/")  # the session's organization is stored on the first visit
    admin.post(URL, {"mode": "window"})
    before = queries_of_the_page(admin)
    admin.post(URL, {"mode": "last"})
    assert OrganizationChange.objects.filter(organization=acme).count() == 2
    assert queries_of_the_page(admin) == before


def test_a_member_gets_404_and_changes_nothing(owner_web, acme):
    assert owner_web.post(URL, {"mode": "last"}).status_code == 404
    assert Organization.objects.get(pk=acme.pk).history_mode == "summarize"
    assert not OrganizationChange.objects.exists()


def test_another_organizations_admin_changes_only_theirs(acme, globex):
    globex_admin = web_client(make_person("gus", globex, role="admin"))
    assert globex_admin.post(URL, {"mode": "last"}).status_code == 302
    assert Organization.objects.get(pk=globex.pk).history_mode == "last"
    assert Organization.objects.get(pk=acme.pk).history_mode == "summarize"
    assert not OrganizationChange.objects.filter(organization=acme).exists()


def test_anonymous_is_sent_to_log_in(acme):
    response = Client().post(URL, {"mode": "last"})
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert Organization.objects.get(pk=acme.pk).history_mode == "summarize"

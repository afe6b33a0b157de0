"""The engine included at a prefix (`path("helper/", include(...))`,
tests/web/prefixed_urls.py), server side: every page and fragment links only
under /helper/ (or /static/), the scripts' config names the roots under it, and
the panel tag alone on a product's bare page brings each of its assets once."""

import json
from collections import Counter
from html.parser import HTMLParser

import pytest
from django.test import override_settings

from assistant_engine.web.presenters import FileView
from tests.conftest import make_person
from tests.web.conftest import make_card, make_conversation, web_client
from workspace.models import Note

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("prefixed")]

PREFIXED = "tests.web.prefixed_urls"
LINK_ATTRIBUTES = {"href", "src", "action", "formaction"}


@pytest.fixture
def prefixed():
    with override_settings(ROOT_URLCONF=PREFIXED):
        yield


class Links(HTMLParser):
    """Every URL-valued attribute (href, src, action, data-…-url), and the scripts' config."""

    def __init__(self):
        super().__init__()
        self.urls: list[str] = []
        self.assets: list[str] = []
        self.configs: list[str] = []
        self._in_config = False

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value is not None and (name in LINK_ATTRIBUTES or (name.startswith("data-") and name.endswith("-url"))):
                self.urls.append(value)
        attributes = dict(attrs)
        if tag == "script" and attributes.get("src"):
            self.assets.append(attributes["src"])
        if tag == "link" and attributes.get("rel") == "stylesheet":
            self.assets.append(attributes["href"])
        self._in_config = tag == "script" and attributes.get("id") == "assistant-config"

    def handle_data(self, data):
        if self._in_config:
            self.configs.append(data)
            self._in_config = False


def links_of(html: str) -> Links:
    parser = Links()
    parser.feed(html)
    return parser


def outside_the_prefix(parser: Links) -> list[str]:
    paths = [url for url in parser.urls if url.startswith("/")]
    return [url for url in paths if not url.startswith(("/helper/", "/static/"))]


def get(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return response.content.decode()


def test_every_page_and_fragment_links_under_the_prefix(owner):
    thread = make_conversation(owner)
    card = make_card(owner, thread)
    note = Note.objects.create(organization=owner.organization, owner=owner.user, title="Plan")
    client = web_client(owner)
    pages = ["/helper/", f"/helper/c/{thread.id}/", "/helper/data/", "/helper/tokens/", "/helper/instructions/",
             "/helper/notes/", f"/helper/notes/{note.id}/"]
    fragments = [f"/helper/c/{thread.id}/messages", "/helper/conversations/list", f"/helper/cards/{card.id}/",
                 "/helper/assistant/panel/chat"]
    for url in pages + fragments:
        parser = links_of(get(client, url))
        assert outside_the_prefix(parser) == [], url
        assert url in fragments or any(link.startswith("/helper/") for link in parser.urls), url  # it proves something
    for url in pages:
        [config] = links_of(get(client, url)).configs
        assert {key: value for key, value in json.loads(config).items() if key in ("base", "api")} == {
            "base": "/helper/", "api": "/helper/api/"}, url
    assert f"/helper/c/{thread.id}/" in get(client, "/helper/conversations/list")


def test_the_organization_page_links_under_the_prefix(acme):
    admin = web_client(make_person("ada", acme, role="admin"))
    assert outside_the_prefix(links_of(get(admin, "/helper/organization/"))) == []


def test_a_file_and_the_export_are_served_under_the_prefix(owner):
    assert FileView(id="f1", name="a.md", media_type="text/plain", size=1).url == "/helper/api/files/f1/content"
    assert 'href="/helper/api/me/export"' in get(web_client(owner), "/helper/data/")


def test_the_login_redirect_stays_under_the_prefix(client):
    response = client.get("/helper/")
    assert response.status_code == 302 and response["Location"].startswith("/helper/login/")


EXPECTED_ASSETS = {
    "/helper/jsi18n/", "/static/assistant/app.js", "/static/assistant/app.css", "/static/assistant/panel.css",
    "/static/assistant/highlight.css", "/static/assistant/vendor/katex/katex.min.css",
    "/static/assistant/vendor/katex/katex.min.js",
}


def test_the_tag_alone_brings_each_asset_once_on_a_bare_page(owner):
    html = get(web_client(owner), "/shop/")
    parser = links_of(html)
    counts = Counter(parser.assets)
    assert set(counts) == EXPECTED_ASSETS and set(counts.values()) == {1}, counts
    assert '<script type="module" src="/static/assistant/app.js"></script>' in html
    [config] = parser.configs
    config = json.loads(config)
    assert (config["base"], config["api"], config["organization"]) == ("/helper/", "/helper/api/", "acme")
    assert (config["ai"], config["user"]) == ("/helper/ai/", str(owner.user.id))  # memory.js's /ai/ root and person
    assert len(config["csrfToken"]) >= 32  # the scripts' X-CSRFToken, without a <meta> of the product's
    assert outside_the_prefix(parser) == []
    assert 'aria-label="Assistant"' in html and "<assistant-chat" in html


def test_on_our_own_layout_the_panel_adds_only_its_stylesheet(owner):
    note = Note.objects.create(organization=owner.organization, owner=owner.user, title="Plan")
    for url in ("/helper/notes/", f"/helper/notes/{note.id}/"):
        parser = links_of(get(web_client(owner), url))
        counts = Counter(parser.assets)
        assert set(counts.values()) == {1}, counts  # base.html's and the panel's, none twice
        assert EXPECTED_ASSETS <= set(counts) and len(parser.configs) == 1


def test_the_bare_page_of_an_anonymous_visitor_has_nothing_of_the_assistant(client):
    html = get(client, "/shop/")
    assert "assistant" not in html.split("</main>")[1].lower()

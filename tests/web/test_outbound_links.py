"""Issue 33.3: links are not a channel. A link the model wrote to another host
goes through /out/, which shows the whole destination and needs a second
click; the reply names the host; the person's own links and the deployment's
own stay direct. In Chromium: nothing reaches the other host before that click."""

import re
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from assistant_engine.web.outbound import destination
from tests.web.conftest import make_conversation, web_client

EXFIL = "https://evil.example/c?iban=CH9300762011623852957&name=Olivia"
REPLY = f"Here is [your invoice]({EXFIL}), and [our help](https://assistant.example/help)."


@pytest.fixture
def linked(owner, settings):
    settings.ALLOWED_HOSTS = ["assistant.example", "testserver", "localhost", "127.0.0.1"]
    return make_conversation(owner, content="My bank: https://bank.example/login", reply=REPLY)


def outbound_tokens(page: str) -> list[str]:
    return [parse_qs(urlsplit(unescape(href)).query)["to"][0]
            for href in re.findall(r'href="(/out/\?to=[^"]+)"', page)]


def test_the_models_link_to_another_host_goes_through_the_interstitial(owner, linked):
    page = web_client(owner).get(f"/c/{linked.id}/").content.decode()
    assert f'href="{EXFIL}' not in page and 'href="https://evil.example' not in page
    assert 'data-outbound="evil.example"' in page and '<span class="link-host">(evil.example)</span>' in page
    assert [destination(token) for token in outbound_tokens(page)] == [EXFIL]
    # The deployment's own host and the person's own link stay direct.
    assert 'href="https://assistant.example/help"' in page and 'href="https://bank.example/login"' in page


def test_the_interstitial_shows_the_whole_destination_and_opens_only_on_a_click(owner, linked):
    client = web_client(owner)
    [token] = outbound_tokens(client.get(f"/c/{linked.id}/").content.decode())
    page = unescape(client.get("/out/", {"to": token}).content.decode())
    assert EXFIL in page and "Open evil.example" in page and 'rel="noopener noreferrer nofollow"' in page
    assert "Everything after the “?” is sent to that site" in page


@pytest.mark.parametrize("token", ["", "https://evil.example/", "x" * 40])
def test_a_destination_not_signed_by_us_is_not_found(owner, token):
    assert web_client(owner).get("/out/", {"to": token}).status_code == 404


def test_anonymous_is_sent_to_login(owner, linked):
    [token] = outbound_tokens(web_client(owner).get(f"/c/{linked.id}/").content.decode())
    response = Client().get("/out/", {"to": token})
    assert response.status_code == 302 and response["Location"].startswith("/login/")

"""One Content-Security-Policy on every response (django-csp), the admin and
the API docs included; Swagger UI served by the app (sidecar), its inline
script and style allowed by the request's nonce only."""

import re

import pytest

DOCS = "/api/docs/"


def policy_of(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in header.split(";") if part.strip()}


def assert_strict(policy: dict[str, list[str]]):
    assert policy["default-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"]
    for directive in ("script-src", "style-src"):
        assert policy[directive][0] == "'self'"
        assert all(source.startswith("'nonce-") for source in policy[directive][1:])
    assert not any("unsafe" in source or "http" in source for sources in policy.values() for source in sources)


def test_the_docs_page_is_served_from_the_app_under_the_policy(client, db):
    response = client.get(DOCS)
    assert response.status_code == 200
    html = response.content.decode()
    policy = policy_of(response)
    assert_strict(policy)
    nonce = policy["script-src"][1].removeprefix("'nonce-").removesuffix("'")
    assert policy["style-src"][1] == f"'nonce-{nonce}'"
    # Every inline script and style carries it; everything else comes from our own static files.
    assert re.findall(r"<script(?: nonce=\"([^\"]+)\")?>", html) == [nonce]
    assert re.findall(r"<style(?: nonce=\"([^\"]+)\")?>", html) == [nonce]
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert sources and all(source.startswith("/static/drf_spectacular_sidecar/") for source in sources)
    assert "cdn" not in html and "@latest" not in html


def test_each_docs_answer_has_a_fresh_nonce(client, db):
    first, second = (policy_of(client.get(DOCS))["script-src"][1] for _ in range(2))
    assert first != second


@pytest.mark.parametrize("url", ["/admin/", "/admin/assistant_organizations/organization/add/"])
def test_the_admin_is_under_the_policy(admin_client, url):
    response = admin_client.get(url)
    assert response.status_code == 200
    assert_strict(policy_of(response))


def test_api_answers_and_pages_are_under_the_policy(owner, anonymous, client):
    for response in (owner.client.get("/api/conversations"), anonymous.get("/api/credits"),
                     client.get("/login/"), client.get("/admin/login/"), client.get("/api/schema/")):
        assert_strict(policy_of(response))

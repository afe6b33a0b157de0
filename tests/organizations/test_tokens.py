"""API tokens (django-rest-knox): hashed, expiring, `Bearer` or `Token`, bound
to one organization; created and revoked on the tokens page or by
`manage.py create_token`; never listed in clear in the admin."""

import hashlib
import io
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone
from rest_framework.test import APIClient

from assistant_engine.organizations.models import ApiToken, Membership, Organization
from assistant_engine.organizations.tokens import create_token
from tests.streamed import streamed_json

CREDITS_URL = "/api/credits"
EXPORT_URL = "/api/me/export"  # names the organization it was made in
LIST_URL = "/api/conversations"


def acting_in(client, **headers) -> str:
    response = client.get(EXPORT_URL, **headers)
    assert response.status_code == 200, response.content
    return streamed_json(response)["organization"]["slug"]


def api_client(header: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    return client


def test_only_a_digest_of_the_token_is_stored(owner):
    row, raw = create_token(owner.member, days=30)
    stored = ApiToken.objects.filter(pk=row.pk).values().get()
    assert stored["digest"] == hashlib.sha512(raw.encode()).hexdigest()
    assert all(raw not in str(value) for value in stored.values())
    assert len(raw) >= 64 and stored["token_key"] == raw[:15]


@pytest.mark.parametrize("scheme", ["Bearer", "Token", "bearer"])
def test_bearer_and_token_schemes_both_authenticate(owner, scheme):
    response = api_client(f"{scheme} {owner.token}").get(LIST_URL)
    assert response.status_code == 200


@pytest.mark.parametrize("header", [
    "Bearer", "Bearer a b", "Bearer not-a-token", "Token 0123456789abcdef0123",
    "Bearer abc\x00defgh", "Token 0123456789abcde\x00", "Bearer é", "Token \xff\xff\xff",  # 500s before
])
def test_a_wrong_token_is_401(owner, header):
    response = api_client(header).get(LIST_URL)
    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"
    assert response["WWW-Authenticate"] == "Bearer"


def test_an_expired_token_is_refused_and_deleted(owner):
    ApiToken.objects.filter(user=owner.user).update(expiry=timezone.now() - timedelta(seconds=1))
    response = owner.client.get(LIST_URL)
    assert response.status_code == 401
    assert not ApiToken.objects.filter(user=owner.user).exists()


def test_a_token_expires_after_its_days(owner):
    row, _ = create_token(owner.member, days=7)
    assert timedelta(days=7) - timedelta(minutes=1) < row.expiry - timezone.now() <= timedelta(days=7)
    with pytest.raises(ValueError):
        create_token(owner.member, days=0)


@pytest.fixture
def in_two(owner, globex):
    """Olivia, in Acme (her fixture token) and in Globex, with a Globex token."""
    Membership.objects.create(organization=globex, user=owner.user)
    globex_member = owner.member.__class__(organization_id=globex.id, user_id=owner.user.id, role="member",
                                           organization_slug="globex")
    _, globex_token = create_token(globex_member)
    return api_client(f"Bearer {globex_token}")


def test_a_token_acts_in_its_own_organization_without_a_header(owner, globex, in_two):
    # Without a token, a person of two organizations must name one (400 organization_required).
    assert acting_in(in_two) == "globex"
    assert acting_in(owner.client) == "acme"


def test_a_token_ignores_the_sessions_organization(owner, globex, in_two):
    session = APIClient()
    session.force_login(owner.user)
    session.post("/organizations/", {"organization": "acme"})
    assert acting_in(session) == "acme"
    assert acting_in(in_two) == "globex"


def test_a_header_naming_another_of_their_organizations_does_not_move_the_token(owner, globex, in_two):
    response = in_two.get(CREDITS_URL, HTTP_X_ORGANIZATION="acme")
    assert response.status_code == 403
    assert response.json()["code"] == "token_organization_mismatch"
    assert acting_in(in_two, HTTP_X_ORGANIZATION="globex") == "globex"


def test_a_header_naming_an_organization_not_theirs_is_not_found(owner):
    Organization.objects.create(slug="initech", name="Initech")
    for slug in ("initech", "nowhere"):
        response = owner.client.get(CREDITS_URL, HTTP_X_ORGANIZATION=slug)
        assert response.status_code == 404
        assert response.json()["code"] == "organization_not_found"


def test_a_token_of_an_organization_the_person_left_acts_nowhere(owner, globex, in_two):
    # Leaving deletes the person's tokens there (organizations/signals.py, tested in test_token_cleanup.py).
    Membership.objects.filter(organization=globex, user=owner.user).delete()
    response = in_two.get(CREDITS_URL)
    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"
    assert acting_in(owner.client) == "acme"


def test_a_token_that_outlived_its_membership_acts_nowhere(owner, globex, in_two):
    """The guard still refuses a token whose membership went by a path that
    sends no signal (raw SQL): the membership, not the token, is the proof."""
    Membership.objects.filter(organization=globex, user=owner.user)._raw_delete(using="default")
    response = in_two.get(CREDITS_URL)
    assert response.status_code == 403
    assert response.json()["code"] == "no_organization"


# --- manage.py create_token ----------------------------------------------------------


def test_create_token_prints_only_a_working_token(owner):
    out = io.StringIO()
    call_command("create_token", "olivia", "--organization", "acme", "--days", "3", stdout=out)
    token = out.getvalue().strip()
    assert out.getvalue() == token + "\n" and " " not in token
    row = ApiToken.objects.get(digest=hashlib.sha512(token.encode()).hexdigest())
    assert (row.user_id, row.organization_id) == (owner.user.id, owner.organization.id)
    assert row.expiry - timezone.now() <= timedelta(days=3)
    assert acting_in(api_client(f"Bearer {token}")) == "acme"


@pytest.mark.parametrize("arguments, message", [
    (["nobody", "--organization", "acme"], "No active user"),
    (["otto", "--organization", "acme"], "not a member"),
    (["olivia", "--organization", "acme", "--days", "0"], "1 to 366 days"),
])
def test_create_token_refuses_clearly(owner, outsider, arguments, message):
    before = ApiToken.objects.count()
    with pytest.raises(CommandError, match=message):
        call_command("create_token", *arguments, stdout=io.StringIO())
    assert ApiToken.objects.count() == before


# --- The tokens page -----------------------------------------------------------------


def page_client(person):
    client = APIClient()
    client.force_login(person.user)
    return client


def test_the_tokens_page_shows_a_new_token_once_and_it_works(owner):
    """POST, redirect, GET: the token is shown by the GET that follows, once;
    reloading the page (once a second POST) never creates another token."""
    client = page_client(owner)
    response = client.post("/tokens/new", {"name": "My script", "days": "30"})
    assert response.status_code == 302 and response["Location"] == "/tokens/"
    shown = client.get("/tokens/")
    assert "no-store" in shown["Cache-Control"]
    row = ApiToken.objects.get(user=owner.user, name="My script")
    html = shown.content.decode()
    raw = html.split('<code class="token-value" id="new-token-value">')[1].split("</code>")[0]
    assert row.digest == hashlib.sha512(raw.encode()).hexdigest()
    assert 'data-copy="new-token-value"' in html  # the Copy button, for that token
    assert api_client(f"Bearer {raw}").get(CREDITS_URL).status_code == 200

    reloaded = client.get("/tokens/").content.decode()
    assert ApiToken.objects.filter(user=owner.user).count() == 2  # the fixture's and this one
    assert "My script" in reloaded and str(row.public_id) in reloaded
    assert raw not in reloaded and row.token_key not in reloaded and row.digest not in reloaded
    assert client.session.get("assistant_engine.web.new_api_token") is None


def test_each_token_shows_its_prefix_creation_and_last_use(owner):
    row = ApiToken.objects.get(user=owner.user)
    client = page_client(owner)
    item = token_item(client.get("/tokens/").content.decode(), row)
    assert "<code data-token-prefix" in item and f">{owner.token[:8]}…</code>" in item
    assert row.created.strftime("created %Y-%m-%d %H:%M") in item and "never used" in item
    assert owner.client.get(CREDITS_URL).status_code == 200
    row.refresh_from_db()
    item = token_item(client.get("/tokens/").content.decode(), row)
    assert row.last_used_at is not None and row.last_used_at.strftime("last used %Y-%m-%d %H:%M (UTC)") in item


def token_item(html: str, row) -> str:
    return html.split(f'data-token="{row.public_id}"')[1].split("</li>")[0]


def test_a_tokens_last_use_is_written_once_a_minute_at_most(owner, django_assert_num_queries):
    # token, membership, account and (the month not opened) the allowance; and the last use
    with django_assert_num_queries(5):
        owner.client.get(CREDITS_URL)
    with django_assert_num_queries(4):
        owner.client.get(CREDITS_URL)
    ApiToken.objects.filter(user=owner.user).update(last_used_at=timezone.now() - timedelta(minutes=2))
    with django_assert_num_queries(5):
        owner.client.get(CREDITS_URL)


def test_revoke_asks_first_and_the_token_works_until_confirmed(owner):
    row = ApiToken.objects.get(user=owner.user)
    client = page_client(owner)
    listing = client.get("/tokens/").content.decode()
    # A link to a page that asks, no longer a form that revokes at once.
    assert f'href="/tokens/{row.public_id}/revoke"' in listing and f'action="/tokens/{row.public_id}' not in listing
    question = client.get(f"/tokens/{row.public_id}/revoke")
    assert question.status_code == 200 and "data-revoke-question" in question.content.decode()
    assert f"{owner.token[:8]}…" in question.content.decode()
    assert owner.client.get(CREDITS_URL).status_code == 200  # asking revoked nothing
    assert client.post(f"/tokens/{row.public_id}/revoke").status_code == 302
    assert owner.client.get(CREDITS_URL).status_code == 401
    assert client.get(f"/tokens/{row.public_id}/revoke").status_code == 404


def test_a_bad_lifetime_is_refused_on_the_page(owner):
    response = page_client(owner).post("/tokens/new", {"name": "x", "days": "5000"})
    assert response.status_code == 400
    assert not ApiToken.objects.filter(name="x").exists()


def test_a_person_holds_a_bounded_number_of_tokens(owner):
    from assistant_engine.organizations.tokens import MAX_TOKENS_PER_PERSON

    for _ in range(MAX_TOKENS_PER_PERSON - 1):  # the fixture's token is the first
        create_token(owner.member, days=1)
    response = page_client(owner).post("/tokens/new", {"name": "one more", "days": "30"})
    assert response.status_code == 409 and "revoke one first" in response.content.decode()
    with pytest.raises(CommandError, match="already holds"):
        call_command("create_token", "olivia", "--organization", "acme", stdout=io.StringIO())
    assert ApiToken.objects.filter(user=owner.user).count() == MAX_TOKENS_PER_PERSON


def test_the_tokens_page_lists_only_ones_own_tokens_in_this_organization(owner, colleague, outsider):
    html = page_client(colleague).get("/tokens/").content.decode()
    owners_token = ApiToken.objects.get(user=owner.user)
    assert str(owners_token.public_id) not in html
    assert str(ApiToken.objects.get(user=colleague.user).public_id) in html


def test_the_owner_revokes_a_token_and_it_stops_working(owner):
    row = ApiToken.objects.get(user=owner.user)
    response = page_client(owner).post(f"/tokens/{row.public_id}/revoke")
    assert response.status_code == 302 and response["Location"] == "/tokens/"
    assert owner.client.get(CREDITS_URL).status_code == 401


@pytest.mark.parametrize("who", ["colleague", "outsider"])
def test_nobody_else_revokes_a_token(owner, colleague, outsider, who):
    row = ApiToken.objects.get(user=owner.user)
    client = page_client({"colleague": colleague, "outsider": outsider}[who])
    assert client.post(f"/tokens/{row.public_id}/revoke").status_code == 404
    assert client.get(f"/tokens/{row.public_id}/revoke").status_code == 404
    assert owner.client.get(CREDITS_URL).status_code == 200


def test_anonymous_visitors_are_sent_to_log_in(owner):
    row = ApiToken.objects.get(user=owner.user)
    anonymous = APIClient()
    for response in (anonymous.get("/tokens/"), anonymous.post("/tokens/new", {"days": "30"}),
                     anonymous.post(f"/tokens/{row.public_id}/revoke")):
        assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert ApiToken.objects.filter(user=owner.user).count() == 1


def test_the_page_is_csrf_protected(owner):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(owner.user)
    assert client.post("/tokens/new", {"days": "30"}).status_code == 403


# --- Admin and erasure ------------------------------------------------------------


def test_the_admin_never_shows_a_token_nor_its_start(admin_client, owner):
    # The digest is the primary key, so it is in the admin's URLs: it can't be turned back into the token.
    row = ApiToken.objects.get(user=owner.user)
    tokens = "/admin/assistant_organizations/apitoken/"
    for url in (tokens, f"{tokens}{row.pk}/change/"):
        html = admin_client.get(url).content.decode()
        assert "olivia" in html and str(row.public_id) in html
        assert owner.token not in html and row.token_key not in html
    assert admin_client.get("/admin/assistant_organizations/apitoken/add/").status_code == 403


def test_the_old_clear_text_token_app_is_gone(settings):
    assert "rest_framework.authtoken" not in settings.INSTALLED_APPS


def test_an_mcp_only_token_made_on_the_page_is_refused_by_the_api_and_ai_doors(owner):
    """The program that holds it can't confirm a card, nor start a turn whose card it would confirm."""
    client = page_client(owner)
    assert client.post("/tokens/new", {"name": "Claude", "days": "30", "mcp_only": "on"}).status_code == 302
    html = client.get("/tokens/").content.decode()
    raw = html.split('<code class="token-value" id="new-token-value">')[1].split("</code>")[0]
    assert ApiToken.objects.get(user=owner.user, name="Claude").mcp_only
    assert "data-token-mcp-only" in html
    for method, url in (("get", CREDITS_URL), ("post", "/api/chat"), ("get", "/ai/conversations"),
                        ("post", f"/api/cards/{ApiToken().public_id}/confirm")):
        response = getattr(api_client(f"Bearer {raw}"), method)(url, {}, format="json")
        assert response.status_code == 401 and response.json()["code"] == "authentication_failed", (url, response)


def test_a_token_is_for_the_api_unless_asked(owner):
    _, raw = create_token(owner.member, days=1)
    assert api_client(f"Bearer {raw}").get(CREDITS_URL).status_code == 200
    _, mcp_raw = create_token(owner.member, days=1, mcp_only=True)
    assert api_client(f"Bearer {mcp_raw}").get(CREDITS_URL).status_code == 401


def test_create_token_makes_an_mcp_only_token_when_asked(owner):
    out = io.StringIO()
    call_command("create_token", owner.user.username, organization=owner.organization.slug, mcp_only=True,
                 stdout=out)
    token = out.getvalue().strip()
    assert ApiToken.objects.get(digest=hashlib.sha512(token.encode()).hexdigest()).mcp_only
    assert api_client(f"Bearer {token}").get(CREDITS_URL).status_code == 401


def test_a_token_needs_a_name_and_the_page_says_where_the_api_docs_and_mcp_are(owner):
    """Issue 34.7: an unnamed token can't be told apart when it has to be revoked."""
    client = page_client(owner)
    before = ApiToken.objects.filter(user=owner.user).count()
    response = client.post("/tokens/new", {"name": "  ", "days": "30"})
    assert response.status_code == 400 and "Name it after what will use it." in response.content.decode()
    assert ApiToken.objects.filter(user=owner.user).count() == before
    page = client.get("/tokens/").content.decode()
    assert 'href="/api/docs/" data-api-docs' in page
    assert "<code>http://testserver/mcp</code>" in page

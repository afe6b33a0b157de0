"""The organization page: for members with role admin; a member gets 404 (on
the page and on every action), an outsider's admin acts only in their own
organization, staff without a membership see no organization's page; every
change is recorded and shown."""

from html import unescape

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from assistant_engine.organizations.models import Membership, Organization, OrganizationChange
from assistant_engine.providers.models import ProviderKey
from tests.assistant.conftest import play
from tests.conftest import make_person
from tests.fakes.scripted import ScriptedClient, say
from tests.fakes.wire_servers import WireServer, json_reply, openai_completion
from tests.web.conftest import web_client

PAGE = "/organization/"
KEY = "ik-organization-key-7f3a"


@pytest.fixture
def admin(acme):
    return make_person("ada", acme, role="admin")


@pytest.fixture
def admin_web(admin) -> Client:
    return web_client(admin)


@pytest.fixture
def infomaniak(settings):
    with WireServer() as wire:
        settings.INFOMANIAK_AI_PRODUCT_ID = "4242"
        settings.INFOMANIAK_AI_BASE_URL = wire.url + "/v1"
        yield wire


def actions(owner):
    """Every action of the page, as (url, body)."""
    user_id = owner.user.id
    return [
        ("/organization/model", {"option": "offline"}),
        ("/organization/member-models", {"rule": "any"}),
        ("/organization/history-mode", {"mode": "window"}),
        ("/organization/untrusted-writes", {"mode": "run"}),
        ("/organization/keys", {"provider": "infomaniak", "key": KEY}),
        ("/organization/keys/infomaniak/remove", {}),
        ("/organization/default-cap", {"credits": "5"}),
        ("/organization/credit-alerts", {"percents": "50"}),
        (f"/organization/members/{user_id}/cap", {"credits": "5"}),
        (f"/organization/members/{user_id}/suspend", {"reason": "no"}),
        (f"/organization/members/{user_id}/restore", {}),
    ]


def test_an_admin_sees_members_usage_caps_keys_and_changes(admin_web, admin, owner, colleague, acme):
    play(owner, ScriptedClient(say("Sure.")))  # offline prices: Usage(100, 20) on Haiku = 200 micros
    Membership.objects.filter(user=colleague.user).update(monthly_cap_credits=12)
    ProviderKey.objects.create(organization=acme, provider="bedrock", sealed="v1.x", hint="…WXYZ")

    page = admin_web.get(PAGE)

    html = page.content.decode()
    assert page.status_code == 200
    assert 'data-member="olivia"' in html and 'data-member="colin"' in html and 'data-member="ada"' in html
    assert 'data-member="otto"' not in html  # the outsider is not in this organization
    assert "…WXYZ" in html and 'value="12"' in html and "data-organization-link" in html


def test_the_page_reads_a_fixed_number_of_queries(admin_web, admin, owner, colleague,
                                                  django_assert_num_queries):
    # The month is open (so its summary is one query) and someone spent: the
    # month's usage per person is one query of their totals, names included;
    # the spend section two more (the month's day totals, the last 12 months' accounts).
    play(owner, ScriptedClient(say("Sure.")))
    admin_web.get(PAGE)  # the session's organization is stored on the first visit
    with django_assert_num_queries(13):
        admin_web.get(PAGE)
    for index in range(5):
        make_person(f"extra{index}", admin.organization)
    with django_assert_num_queries(13):
        admin_web.get(PAGE)


def test_an_admin_sets_the_credit_alerts_thresholds_and_the_log_says_it(admin_web, acme):
    """Issue 35.3: the admins choose when they are told; empty goes back to the deployment's (80, 100)."""
    page = unescape(admin_web.get(PAGE).content.decode())
    assert 'name="percents"' in page and 'placeholder="80, 100"' in page

    assert admin_web.post("/organization/credit-alerts", {"percents": " 90,50 50 "}).status_code == 302
    acme.refresh_from_db()
    assert acme.credit_alert_percents == "50,90"
    page = unescape(admin_web.get(PAGE).content.decode())
    assert 'value="50,90"' in page
    assert "ada set the credit alerts at 50\u00a0%, 90\u00a0% of the month's credits" in page

    assert admin_web.post("/organization/credit-alerts", {"percents": ""}).status_code == 302
    acme.refresh_from_db()
    assert acme.credit_alert_percents == ""
    assert "ada went back to the deployment's credit alerts" in unescape(admin_web.get(PAGE).content.decode())


def test_the_usage_csv_is_of_the_month_the_picker_chose(admin_web, owner, outsider):
    """Issue 35.4: the period by a month picker; a month that is not one is a 400 with its code."""
    from credits.services import credits_reserve, credits_settle
    from tests.credits.support import MID_MARCH, new_turn

    for person in (owner, outsider):
        turn = new_turn()
        credits_reserve(person.member, turn_id=turn, now=MID_MARCH)
        credits_settle(turn_id=turn, cost_micros=123_400)
    page = unescape(admin_web.get(PAGE).content.decode())
    assert 'type="month" name="month"' in page and 'action="/organization/usage.csv"' in page

    march = b"".join(admin_web.get("/organization/usage.csv?month=2026-03").streaming_content).decode()
    assert march.splitlines()[1:] == [f"2026-03,{owner.user.pk},olivia,1,12.3400,0.0000,123400,0"]
    this_month = b"".join(admin_web.get("/organization/usage.csv").streaming_content).decode()
    assert "2026-03" not in this_month and len(this_month.splitlines()) == 1  # the header alone
    for bad in ("2026-13", "March", "2026-3", "2026-03-01"):
        refused = admin_web.get("/organization/usage.csv", {"month": bad})
        assert (refused.status_code, refused.json()["code"]) == (400, "invalid_month"), bad


def test_a_member_without_the_admin_role_gets_404_on_the_page_and_every_action(owner_web, owner, colleague):
    assert owner_web.get(PAGE).status_code == 404
    assert owner_web.get("/organization/usage.csv").status_code == 404
    for url, body in actions(colleague):
        assert owner_web.post(url, body).status_code == 404, url
    assert not OrganizationChange.objects.exists()
    assert b"data-organization-link" not in owner_web.get("/").content


def test_an_outsiders_admin_sees_only_their_organization_and_cannot_act_on_ours(owner, globex):
    globex_admin = web_client(make_person("gus", globex, role="admin"))

    page = globex_admin.get(PAGE).content.decode()

    assert 'data-member="gus"' in page and 'data-member="olivia"' not in page
    for url in (f"/organization/members/{owner.user.id}/cap", f"/organization/members/{owner.user.id}/suspend",
                f"/organization/members/{owner.user.id}/restore"):
        assert globex_admin.post(url, {"credits": "1", "reason": "x"}).status_code == 404
    assert Membership.objects.get(user=owner.user).monthly_cap_credits is None
    assert not Membership.objects.filter(suspended_at__isnull=False).exists()


def test_staff_without_a_membership_see_no_organizations_page(acme):
    staff = get_user_model().objects.create_superuser("root", "root@example.com", "pw-root")
    client = Client()
    client.force_login(staff)

    response = client.get(PAGE)

    assert response.status_code == 403 and b"not in an organization" in response.content


def test_anonymous_is_sent_to_login_on_the_page_and_every_action(owner):
    response = Client().get(PAGE)
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    for url, body in actions(owner):
        response = Client().post(url, body)
        assert response.status_code == 302 and response["Location"].startswith("/login/"), url
    assert not OrganizationChange.objects.exists()


def test_an_admin_changes_the_model_caps_and_suspensions_and_each_change_is_shown(admin_web, owner, acme):
    assert admin_web.post("/organization/model", {"option": "offline"}).status_code == 302
    assert admin_web.post("/organization/default-cap", {"credits": "50"}).status_code == 302
    assert admin_web.post(f"/organization/members/{owner.user.id}/cap", {"credits": "9"}).status_code == 302
    assert admin_web.post(f"/organization/members/{owner.user.id}/suspend", {"reason": "Left"}).status_code == 302
    assert owner.client.get("/api/conversations").status_code == 403
    assert admin_web.post(f"/organization/members/{owner.user.id}/restore").status_code == 302

    organization = Organization.objects.get(pk=acme.pk)
    assert (organization.model_option, organization.default_member_cap_credits) == ("offline", 50)
    assert Membership.objects.get(user=owner.user).monthly_cap_credits == 9
    html = unescape(admin_web.get(PAGE).content.decode())
    for shown in ("ada chose the model Offline demo model", "ada set the default monthly cap to 50 credits",
                  "ada set olivia's monthly cap to 9 credits", "ada suspended olivia (reason: Left)",
                  "ada lifted the suspension of olivia"):
        assert shown in html, shown


def test_an_admin_adds_replaces_and_removes_a_key_seeing_only_its_hint(admin_web, infomaniak, acme):
    infomaniak.reply(openai_completion(), openai_completion())
    assert admin_web.post("/organization/keys", {"provider": "infomaniak", "key": KEY}).status_code == 302
    assert admin_web.post("/organization/keys", {"provider": "infomaniak", "key": "ik-other-key-9b9b"}
                          ).status_code == 302

    html = admin_web.get(PAGE).content.decode()
    assert "…9b9b" in html and KEY not in html and "ik-other-key-9b9b" not in html
    assert ProviderKey.objects.get(organization=acme).hint == "…9b9b"

    assert admin_web.post("/organization/keys/infomaniak/remove").status_code == 302
    assert not ProviderKey.objects.exists()
    assert admin_web.post("/organization/keys/infomaniak/remove").status_code == 404


def test_a_refused_key_is_explained_and_not_saved(admin_web, infomaniak):
    infomaniak.reply(json_reply(401, {"error": {"message": "RAW-PROVIDER-TEXT", "type": "x"}}))

    response = admin_web.post("/organization/keys", {"provider": "infomaniak", "key": KEY})

    html = response.content.decode()
    assert response.status_code == 400 and "The provider refused this key (auth)" in html
    assert "RAW-PROVIDER-TEXT" not in html and KEY not in html and not ProviderKey.objects.exists()


def test_a_server_without_the_providers_product_says_so(admin_web, settings):
    """Once "The provider refused this key (refused)", though the provider was never asked."""
    settings.INFOMANIAK_AI_PRODUCT_ID = settings.INFOMANIAK_AI_BASE_URL = ""
    response = admin_web.post("/organization/keys", {"provider": "infomaniak", "key": KEY})
    html = response.content.decode()
    assert response.status_code == 400 and "refused this key" not in html
    assert "This server has no Infomaniak AI Services (Switzerland) product configured" in html
    assert not ProviderKey.objects.exists()


@pytest.mark.parametrize("url, body, text", [
    ("/organization/model", {"option": "anthropic-claude-sonnet-4-6"}, "not among the ones"),
    ("/organization/keys", {"provider": "nope", "key": KEY}, "Choose a provider"),
    ("/organization/history-mode", {"mode": "everything"}, "Choose one of the ways"),
    ("/organization/untrusted-writes", {"mode": "sometimes"}, "Choose one of the ways"),
    ("/organization/default-cap", {"credits": "-1"}, "whole number"),
    ("/organization/default-cap", {"credits": "many"}, "whole number"),
    ("/organization/credit-alerts", {"percents": "0, 80"}, "whole percentages from 1 to 100"),
    ("/organization/credit-alerts", {"percents": "101"}, "whole percentages from 1 to 100"),
    ("/organization/credit-alerts", {"percents": "eighty"}, "whole percentages from 1 to 100"),
    ("/organization/credit-alerts", {"percents": "80.5"}, "whole percentages from 1 to 100"),
    ("/organization/credit-alerts", {"percents": "10 20 30 40 50 60"}, "at most five"),
    ("/organization/credit-alerts", {"percents": "٨٠"}, "whole percentages from 1 to 100"),
    ("/organization/members/{me}/suspend", {"reason": "myself"}, "suspend yourself"),
    ("/organization/members/{owner}/suspend", {"reason": ""}, "needs a reason"),
])
def test_bad_input_is_a_400_that_changes_nothing(admin_web, admin, owner, url, body, text):
    url = url.format(me=admin.user.id, owner=owner.user.id)

    response = admin_web.post(url, body)

    assert response.status_code == 400 and text in response.content.decode()
    assert not OrganizationChange.objects.exists()


@pytest.mark.parametrize("provider", ["nobody", "%00", "info%00maniak"])
def test_removing_a_key_of_no_known_provider_is_404_not_a_500(admin_web, provider):
    """A crafted provider name (a NUL: PostgreSQL text can't hold one) never reaches the query."""
    assert admin_web.post(f"/organization/keys/{provider}/remove").status_code == 404


def test_an_unknown_member_is_404(admin_web):
    assert admin_web.post("/organization/members/999999/cap", {"credits": "1"}).status_code == 404


def test_the_months_usage_downloads_as_csv(admin_web, owner, outsider):
    play(owner, ScriptedClient(say("Sure.")))
    play(outsider, ScriptedClient(say("Sure.")))

    response = admin_web.get("/organization/usage.csv")

    text = b"".join(response.streaming_content).decode()
    lines = text.strip().splitlines()
    # Credits first, as the page speaks (issue 34.6), micros beside them.
    assert lines[0] == "month,user_id,username,turns,used_credits,reserved_credits,used_micros,reserved_micros"
    assert len(lines) == 2 and ",olivia,1," in lines[1] and "otto" not in text
    used_credits, used_micros = lines[1].split(",")[4], int(lines[1].split(",")[6])
    assert used_micros > 0 and used_credits == f"{used_micros / 10_000:.4f}"

"""The organization chooses its model among the options the deployment allows
and that respect the residency rules; turns, the top bar and the data page
follow the choice."""

import pytest
from django.test import Client

from assistant.models import Turn
from assistant_engine.organizations.models import Organization, OrganizationChange
from assistant_engine.providers.models import ProviderKey
from assistant_engine.providers.org_models import ModelNotAllowed, NotOrganizationAdmin, allowed_options, model_choose
from tests.conftest import make_person


@pytest.fixture
def admin(acme):
    return make_person("ada", acme, role="admin")


@pytest.fixture
def deployment(settings):
    """Infomaniak (CH) and Bedrock (EU) configured; Anthropic (US) has a key but
    US processing is not allowed."""
    settings.DEBUG = False
    settings.ASSISTANT_MODEL = ""
    settings.INFOMANIAK_AI_TOKEN, settings.INFOMANIAK_AI_PRODUCT_ID = "ik", "42"
    settings.BEDROCK_API_KEY, settings.BEDROCK_REGION = "br", "eu-central-2"
    settings.ANTHROPIC_API_KEY = "sk"
    settings.ASSISTANT_ALLOW_US_PROCESSING = False
    settings.ASSISTANT_MODEL_OPTIONS = []
    return settings


def ids(options):
    return [option.id for option in options]


def test_by_default_every_usable_option_may_be_chosen_and_the_us_ones_are_not(deployment):
    chosen = ids(allowed_options())
    assert "infomaniak-qwen3" in chosen and "bedrock-claude-sonnet-4-6" in chosen and "offline" in chosen
    assert not [option for option in chosen if option.startswith("anthropic-")]


def test_the_deployment_narrows_the_options(deployment):
    deployment.ASSISTANT_MODEL_OPTIONS = ["infomaniak-qwen3", "anthropic-claude-haiku-4-5"]
    # An allowed option that breaks the residency rules stays out.
    assert ids(allowed_options()) == ["infomaniak-qwen3"]


def test_an_organizations_own_key_makes_its_providers_options_usable(deployment, acme):
    deployment.INFOMANIAK_AI_TOKEN = ""
    ProviderKey.objects.create(organization=acme, provider="infomaniak", sealed="v1.x", hint="…abcd")

    assert "infomaniak-qwen3" in ids(allowed_options(acme.pk))
    assert "infomaniak-qwen3" not in ids(allowed_options())


def test_an_admin_chooses_the_model_and_turns_use_it(deployment, admin, owner):
    model_choose(admin.member, option_id="bedrock-claude-haiku-4-5")

    response = owner.client.post("/api/chat", {"message": "Hi"}, format="json")

    assert response.status_code == 202
    assert Turn.objects.get(id=response.json()["turnId"]).model_option == "bedrock-claude-haiku-4-5"
    change = OrganizationChange.objects.get()
    assert (change.action, change.detail, change.actor_username) == ("model", "bedrock-claude-haiku-4-5", "ada")


def test_a_choice_outside_the_allowed_options_is_refused(deployment, admin, acme):
    with pytest.raises(ModelNotAllowed):
        model_choose(admin.member, option_id="anthropic-claude-sonnet-4-6")
    with pytest.raises(ModelNotAllowed):
        model_choose(admin.member, option_id="no-such-model")
    assert Organization.objects.get(pk=acme.pk).model_option == ""


def test_a_member_without_the_admin_role_cannot_choose(deployment, owner, acme):
    with pytest.raises(NotOrganizationAdmin):
        model_choose(owner.member, option_id="offline")
    assert Organization.objects.get(pk=acme.pk).model_option == ""


def test_a_choice_the_rules_no_longer_allow_stops_turns_instead_of_moving_data(deployment, admin, owner):
    model_choose(admin.member, option_id="bedrock-claude-haiku-4-5")
    deployment.ASSISTANT_MODEL_OPTIONS = ["offline"]

    response = owner.client.post("/api/chat", {"message": "Hi"}, format="json")

    assert response.status_code == 503 and response.json()["code"] == "model_unavailable"
    assert not Turn.objects.exists()


def test_the_top_bar_and_the_data_page_follow_the_organizations_choice(deployment, admin, owner, outsider):
    model_choose(admin.member, option_id="bedrock-claude-haiku-4-5")
    acme_browser, globex_browser = Client(), Client()
    acme_browser.force_login(owner.user)
    globex_browser.force_login(outsider.user)

    acme_page, globex_page = acme_browser.get("/data/"), globex_browser.get("/data/")

    assert b"Processed in the EU" in acme_page.content and b"Claude Haiku 4.5 (AWS Bedrock, EU)" in acme_page.content
    # Globex chose nothing: the deployment's model, which in production with
    # Infomaniak's credentials set is Infomaniak's default (issue 13).
    assert b"Qwen3 (Infomaniak)" in globex_page.content and b"Processed in Switzerland" in globex_page.content
    assert b"Processed in the EU" not in globex_page.content

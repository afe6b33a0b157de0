"""The model catalog and its rules: keys, data residency (every rule, both
ways), the selected option, the start-up check and the client factory."""

from dataclasses import replace

import pytest
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured

from assistant_engine.providers.catalog import (
    BEDROCK_ALLOWED_REGIONS,
    CATALOG,
    PROCESSING_LABEL,
    check_residency,
    client_for,
    infomaniak_base_url,
    model_option,
    selected_option,
    unusable_reason,
)
from assistant_engine.providers.clients.anthropic_client import AnthropicClient
from assistant_engine.providers.clients.base import ProviderError
from assistant_engine.providers.clients.offline import OfflineModelClient
from assistant_engine.providers.clients.openai_compat import OpenAICompatClient

HAIKU_EU = "bedrock-claude-haiku-4-5"


@pytest.fixture(autouse=True)
def nothing_configured(settings):
    """Every test starts from a fresh machine: no keys, no model chosen."""
    for name in (
        "ASSISTANT_MODEL",
        "INFOMANIAK_AI_TOKEN",
        "INFOMANIAK_AI_PRODUCT_ID",
        "INFOMANIAK_AI_BASE_URL",
        "BEDROCK_REGION",
        "BEDROCK_API_KEY",
        "ANTHROPIC_API_KEY",
    ):
        setattr(settings, name, "")
    settings.DEBUG = False
    settings.ASSISTANT_ALLOW_US_PROCESSING = False
    return settings


@pytest.fixture
def bedrock_ready(settings):
    settings.BEDROCK_REGION = "eu-central-1"
    settings.BEDROCK_API_KEY = "bedrock-key"
    return settings


# --- The catalog ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("option_id", "provider", "model", "location"),
    [
        ("offline", "offline", "offline-demo", "local"),
        ("infomaniak-qwen3", "infomaniak", "qwen3", "CH"),
        ("infomaniak-mistral3", "infomaniak", "mistral3", "CH"),
        ("infomaniak-gpt-oss-120b", "infomaniak", "openai/gpt-oss-120b", "CH"),
        ("infomaniak-apertus-70b", "infomaniak", "swiss-ai/Apertus-70B-Instruct-2509", "CH"),
        ("bedrock-claude-haiku-4-5", "bedrock", "eu.anthropic.claude-haiku-4-5-20251001-v1:0", "EU"),
        ("bedrock-claude-sonnet-4-6", "bedrock", "eu.anthropic.claude-sonnet-4-6", "EU"),
        ("anthropic-claude-haiku-4-5", "anthropic", "claude-haiku-4-5", "US"),
        ("anthropic-claude-sonnet-4-6", "anthropic", "claude-sonnet-4-6", "US"),
    ],
)
def test_catalog_holds_each_model_with_where_it_is_processed(option_id, provider, model, location):
    option = model_option(option_id)

    assert (option.provider, option.model, option.location) == (provider, model, location)
    assert option.processing_label == PROCESSING_LABEL[location]


@pytest.mark.parametrize(
    ("option_id", "prices"),
    [
        ("offline", (0, 0, 0, 0)),
        ("bedrock-claude-haiku-4-5", (1_000_000, 5_000_000, 1_250_000, 100_000)),
        ("anthropic-claude-haiku-4-5", (1_000_000, 5_000_000, 1_250_000, 100_000)),
        ("bedrock-claude-sonnet-4-6", (3_000_000, 15_000_000, 3_750_000, 300_000)),
        ("anthropic-claude-sonnet-4-6", (3_000_000, 15_000_000, 3_750_000, 300_000)),
    ],
)
def test_prices_are_integer_micro_dollars_per_million_tokens(option_id, prices):
    option = model_option(option_id)

    got = (
        option.input_micros_per_mtok,
        option.output_micros_per_mtok,
        option.cache_write_micros_per_mtok,
        option.cache_read_micros_per_mtok,
    )
    assert got == prices
    assert all(type(price) is int for price in got)


def test_every_paid_option_has_a_price_and_ids_are_unique():
    assert len({option.id for option in CATALOG}) == len(CATALOG)
    for option in CATALOG:
        if option.provider != "offline":
            assert option.input_micros_per_mtok > 0 and option.output_micros_per_mtok > 0, option.id


def test_offline_option_is_labelled_as_the_demo_model():
    assert model_option("offline").label == "Offline demo model"
    assert PROCESSING_LABEL == {
        "CH": "Processed in Switzerland",
        "EU": "Processed in the EU",
        "US": "Processed in the US",
        "local": "Offline demo model",
    }


def test_an_unknown_option_id_is_a_key_error():
    with pytest.raises(KeyError):
        model_option("gpt-17")


# --- Keys ------------------------------------------------------------------------


def test_offline_needs_nothing():
    assert unusable_reason(model_option("offline")) is None


def test_infomaniak_needs_a_token_and_a_product_id(settings):
    option = model_option("infomaniak-qwen3")
    assert "INFOMANIAK_AI_TOKEN" in unusable_reason(option)
    assert "INFOMANIAK_AI_PRODUCT_ID" in unusable_reason(option)

    settings.INFOMANIAK_AI_TOKEN = "tok"
    settings.INFOMANIAK_AI_PRODUCT_ID = "42"
    assert unusable_reason(option) is None


def test_infomaniak_needs_no_product_id_with_an_explicit_base_url(settings):
    settings.INFOMANIAK_AI_TOKEN = "tok"
    settings.INFOMANIAK_AI_BASE_URL = "https://proxy.example.ch/v1"

    assert unusable_reason(model_option("infomaniak-qwen3")) is None


def test_bedrock_needs_a_key(settings):
    settings.BEDROCK_REGION = "eu-central-1"
    assert "BEDROCK_API_KEY" in unusable_reason(model_option(HAIKU_EU))

    settings.BEDROCK_API_KEY = "k"
    assert unusable_reason(model_option(HAIKU_EU)) is None


def test_an_organization_key_stands_in_for_the_deployment_key(settings):
    settings.BEDROCK_REGION = "eu-central-1"
    settings.ASSISTANT_ALLOW_US_PROCESSING = True
    settings.INFOMANIAK_AI_PRODUCT_ID = "42"

    assert unusable_reason(model_option(HAIKU_EU), api_key="org-key") is None
    assert unusable_reason(model_option("anthropic-claude-haiku-4-5"), api_key="org-key") is None
    assert unusable_reason(model_option("infomaniak-qwen3"), api_key="org-key") is None


# --- Residency rules, each both ways ----------------------------------------------


@pytest.mark.parametrize("region", sorted(BEDROCK_ALLOWED_REGIONS))
def test_bedrock_in_an_eu_or_swiss_region_is_usable(bedrock_ready, region):
    bedrock_ready.BEDROCK_REGION = region

    assert unusable_reason(model_option(HAIKU_EU)) is None


def test_the_allowed_regions_are_exactly_the_eu_and_zurich_ones():
    assert BEDROCK_ALLOWED_REGIONS == {
        "eu-central-1",
        "eu-central-2",
        "eu-west-1",
        "eu-west-3",
        "eu-north-1",
        "eu-south-1",
        "eu-south-2",
    }


@pytest.mark.parametrize("region", ["eu-west-2", "us-east-1", "us-west-2", "ap-southeast-1", "eu-central-9", "EU"])
def test_bedrock_outside_the_eu_and_switzerland_is_refused(bedrock_ready, region):
    bedrock_ready.BEDROCK_REGION = region

    reason = unusable_reason(model_option(HAIKU_EU))

    assert reason is not None and region in reason


def test_bedrock_without_a_region_is_refused(bedrock_ready):
    bedrock_ready.BEDROCK_REGION = ""

    assert "BEDROCK_REGION" in unusable_reason(model_option(HAIKU_EU))


@pytest.mark.parametrize(
    "model",
    [
        "anthropic.claude-haiku-4-5-20251001-v1:0",
        "us.anthropic.claude-sonnet-4-6",
        "global.anthropic.claude-sonnet-4-6",
    ],
)
def test_a_bedrock_model_that_is_not_an_eu_inference_profile_is_refused(bedrock_ready, model):
    option = replace(model_option(HAIKU_EU), model=model)

    reason = unusable_reason(option)

    assert reason is not None and "eu." in reason


def test_every_bedrock_option_in_the_catalog_is_an_eu_profile(bedrock_ready):
    for option in CATALOG:
        if option.provider == "bedrock":
            assert unusable_reason(option) is None, option.id


def test_anthropic_direct_is_refused_outside_local_development(settings):
    settings.ANTHROPIC_API_KEY = "sk"

    reason = unusable_reason(model_option("anthropic-claude-haiku-4-5"))

    assert reason is not None and "ASSISTANT_ALLOW_US_PROCESSING" in reason


def test_anthropic_direct_is_allowed_in_local_development(settings):
    settings.ANTHROPIC_API_KEY = "sk"
    settings.DEBUG = True

    assert unusable_reason(model_option("anthropic-claude-haiku-4-5")) is None


def test_anthropic_direct_is_allowed_when_us_processing_is_allowed(settings):
    settings.ANTHROPIC_API_KEY = "sk"
    settings.ASSISTANT_ALLOW_US_PROCESSING = True

    assert unusable_reason(model_option("anthropic-claude-haiku-4-5")) is None


# --- The selected option ------------------------------------------------------------


def test_without_a_choice_the_offline_model_is_selected():
    assert selected_option().id == "offline"


def test_the_chosen_usable_option_is_selected(bedrock_ready):
    bedrock_ready.ASSISTANT_MODEL = "bedrock-claude-sonnet-4-6"

    assert selected_option() == model_option("bedrock-claude-sonnet-4-6")


def test_an_unknown_choice_is_a_configuration_error_naming_it(settings):
    settings.ASSISTANT_MODEL = "gpt-17"

    with pytest.raises(ImproperlyConfigured, match="gpt-17.*not a known model option"):
        selected_option()


def test_an_unusable_choice_is_a_configuration_error_with_the_reason(bedrock_ready):
    bedrock_ready.ASSISTANT_MODEL = HAIKU_EU
    bedrock_ready.BEDROCK_REGION = "eu-west-2"

    with pytest.raises(ImproperlyConfigured, match="eu-west-2"):
        selected_option()


# --- Start-up ----------------------------------------------------------------------------


def test_start_up_check_passes_when_nothing_is_configured():
    check_residency()


def test_start_up_check_passes_with_a_usable_choice(bedrock_ready):
    bedrock_ready.ASSISTANT_MODEL = HAIKU_EU

    check_residency()


def test_start_up_check_refuses_a_non_eu_bedrock_region_even_if_bedrock_is_not_selected(settings):
    settings.BEDROCK_REGION = "eu-west-2"

    with pytest.raises(ImproperlyConfigured, match="eu-west-2"):
        check_residency()


def test_start_up_check_refuses_us_processing_that_is_not_allowed(settings):
    settings.ASSISTANT_MODEL = "anthropic-claude-sonnet-4-6"
    settings.ANTHROPIC_API_KEY = "sk"

    with pytest.raises(ImproperlyConfigured, match="US"):
        check_residency()


def test_the_app_runs_the_start_up_check_when_ready(settings):
    settings.ASSISTANT_MODEL = "anthropic-claude-sonnet-4-6"

    with pytest.raises(ImproperlyConfigured):
        apps.get_app_config("assistant_providers").ready()


# --- Clients -------------------------------------------------------------------------------


def test_infomaniak_default_base_url_holds_the_product_id(settings):
    settings.INFOMANIAK_AI_PRODUCT_ID = "4242"

    assert infomaniak_base_url() == "https://api.infomaniak.com/2/ai/4242/openai/v1"


def test_infomaniak_base_url_can_be_overridden(settings):
    settings.INFOMANIAK_AI_PRODUCT_ID = "4242"
    settings.INFOMANIAK_AI_BASE_URL = "https://api.infomaniak.com/1/ai/4242/openai"

    assert infomaniak_base_url() == "https://api.infomaniak.com/1/ai/4242/openai"


def test_client_for_gives_each_provider_its_client(settings, bedrock_ready):
    settings.INFOMANIAK_AI_TOKEN = "tok"
    settings.INFOMANIAK_AI_PRODUCT_ID = "42"
    settings.ANTHROPIC_API_KEY = "sk"
    settings.DEBUG = True

    assert isinstance(client_for(model_option("offline")), OfflineModelClient)
    infomaniak = client_for(model_option("infomaniak-mistral3"))
    assert isinstance(infomaniak, OpenAICompatClient) and infomaniak.model == "mistral3"
    bedrock = client_for(model_option(HAIKU_EU))
    assert isinstance(bedrock, AnthropicClient) and bedrock.model.startswith("eu.")
    assert isinstance(client_for(model_option("anthropic-claude-haiku-4-5")), AnthropicClient)


def test_client_for_refuses_an_unusable_option():
    with pytest.raises(ProviderError) as caught:
        client_for(model_option("infomaniak-qwen3"))

    assert caught.value.kind == "refused"
    assert "INFOMANIAK_AI_TOKEN" in str(caught.value)


def test_a_deployments_client_is_kept_per_process_until_what_shapes_it_changes(settings, monkeypatch):
    from assistant.turn.process_cache import deployment_client

    settings.ANTHROPIC_API_KEY, settings.ASSISTANT_ALLOW_US_PROCESSING = "key-one", True
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    option = model_option("anthropic-claude-haiku-4-5")

    first = deployment_client(option)
    assert deployment_client(option) is first  # the SDK client and its connection pool, reused

    settings.ANTHROPIC_API_KEY = "key-two"
    second = deployment_client(option)
    assert second is not first
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:10")
    assert deployment_client(option) is not second

"""The catalog of model options, where each one processes data, and the rules
that decide whether it may be used here (keys present, data residency).

Settings are read at call time, so a changed setting takes effect at once.
"""

from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_noop

from assistant_engine.providers.clients.base import ModelClient, ProviderError

Provider = Literal["infomaniak", "bedrock", "anthropic", "offline"]
Location = Literal["CH", "EU", "US", "local"]

# In English for the API; the browser shows them in the person's language (web.views).
PROCESSING_LABEL: dict[str, str] = {
    "CH": gettext_noop("Processed in Switzerland"),
    "EU": gettext_noop("Processed in the EU"),
    "US": gettext_noop("Processed in the US"),
    "local": gettext_noop("Offline demo model"),
}

OFFLINE_ID = "offline"
# The seeds' default provider: used without ASSISTANT_MODEL once Infomaniak's credentials are set.
INFOMANIAK_DEFAULT_ID = "infomaniak-qwen3"
INFOMANIAK_DEFAULT_BASE_URL = "https://api.infomaniak.com/2/ai/{product_id}/openai/v1"
# AWS regions in the EU or Switzerland. London (eu-west-2) is left out on
# purpose: it is outside the EU, whatever its name says.
BEDROCK_ALLOWED_REGIONS = frozenset(
    {"eu-central-1", "eu-central-2", "eu-west-1", "eu-west-3", "eu-north-1", "eu-south-1", "eu-south-2"}
)


@dataclass(frozen=True)
class ModelOption:
    """One model a deployment can use. Prices are integer micro-dollars per
    million tokens (1_000_000 = USD 1), so cost maths stays in integers."""

    id: str
    provider: Provider
    model: str
    location: Location
    label: str
    input_micros_per_mtok: int
    output_micros_per_mtok: int
    cache_write_micros_per_mtok: int
    cache_read_micros_per_mtok: int
    # What the model takes in one request, input and output together, and the
    # most it writes in one reply, in tokens, from the provider's documentation
    # (cited at each option). assistant_engine.providers.windows fits every request in them.
    context_window_tokens: int = 200_000
    max_output_tokens: int = 8_192

    @property
    def processing_label(self) -> str:
        return PROCESSING_LABEL[self.location]


def _prices(*, input: str, output: str, cache_write: str, cache_read: str) -> dict[str, int]:
    """List prices in USD per million tokens (as decimal strings, so no float
    rounding) as the option's integer micro-dollar fields."""

    def micros(usd: str) -> int:
        return int(Decimal(usd) * 1_000_000)

    return {
        "input_micros_per_mtok": micros(input),
        "output_micros_per_mtok": micros(output),
        "cache_write_micros_per_mtok": micros(cache_write),
        "cache_read_micros_per_mtok": micros(cache_read),
    }


HAIKU_4_5 = _prices(input="1", output="5", cache_write="1.25", cache_read="0.10")
SONNET_4_6 = _prices(input="3", output="15", cache_write="3.75", cache_read="0.30")

CATALOG: tuple[ModelOption, ...] = (
    ModelOption(
        id=OFFLINE_ID,
        provider="offline",
        model="offline-demo",
        location="local",
        label="Offline demo model",
        # The demo model has no window of its own: Claude's, so the demo behaves as a real deployment.
        context_window_tokens=200_000,
        max_output_tokens=8_192,
        **_prices(input="0", output="0", cache_write="0", cache_read="0"),
    ),
    # Infomaniak: plausible list prices, NOT verified: check them against
    # Infomaniak's AI Services price list (billed in CHF) before charging anyone.
    # No cache discount is known, so cached tokens cost as much as input.
    ModelOption(
        id="infomaniak-qwen3",
        provider="infomaniak",
        model="qwen3",
        location="CH",
        label="Qwen3 (Infomaniak)",
        # Qwen3's model card (huggingface.co/Qwen/Qwen3-235B-A22B): 32,768 tokens natively (131,072
        # only with YaRN scaling, which a host must switch on): the native window, as Infomaniak's
        # product page does not state one. Output: Infomaniak's chat/completions reference
        # (developer.infomaniak.com, "max_tokens" at most 5000).
        context_window_tokens=32_768,
        max_output_tokens=5_000,
        **_prices(input="0.50", output="1.50", cache_write="0.50", cache_read="0.50"),
    ),
    ModelOption(
        id="infomaniak-mistral3",
        provider="infomaniak",
        model="mistral3",
        location="CH",
        label="Mistral 3 (Infomaniak)",
        # Mistral Small 3.2's model card (huggingface.co/mistralai/Mistral-Small-3.2-24B-Instruct-2506,
        # "context window of 128k"); output: Infomaniak's max_tokens bound (5000).
        context_window_tokens=131_072,
        max_output_tokens=5_000,
        **_prices(input="0.20", output="0.60", cache_write="0.20", cache_read="0.20"),
    ),
    ModelOption(
        id="infomaniak-gpt-oss-120b",
        provider="infomaniak",
        model="openai/gpt-oss-120b",
        location="CH",
        label="gpt-oss-120b (Infomaniak)",
        # OpenAI's gpt-oss model card (openai.com/index/gpt-oss-model-card, "context length of
        # 131,072 tokens"); output: Infomaniak's max_tokens bound (5000).
        context_window_tokens=131_072,
        max_output_tokens=5_000,
        **_prices(input="0.30", output="1.00", cache_write="0.30", cache_read="0.30"),
    ),
    ModelOption(
        id="infomaniak-apertus-70b",
        provider="infomaniak",
        model="swiss-ai/Apertus-70B-Instruct-2509",
        location="CH",
        label="Apertus 70B (Infomaniak)",
        # Apertus' model card (huggingface.co/swiss-ai/Apertus-70B-Instruct-2509, "context length
        # of up to 65,536 tokens"); output: Infomaniak's max_tokens bound (5000).
        context_window_tokens=65_536,
        max_output_tokens=5_000,
        **_prices(input="0.50", output="1.50", cache_write="0.50", cache_read="0.50"),
    ),
    ModelOption(
        id="bedrock-claude-haiku-4-5",
        provider="bedrock",
        model="eu.anthropic.claude-haiku-4-5-20251001-v1:0",
        location="EU",
        label="Claude Haiku 4.5 (AWS Bedrock, EU)",
        # Anthropic's models overview (docs.anthropic.com/en/docs/about-claude/models/overview):
        # a 200K context window and 64K max output (Sonnet's 1M window is a beta header we don't send).
        context_window_tokens=200_000,
        max_output_tokens=64_000,
        **HAIKU_4_5,
    ),
    ModelOption(
        id="bedrock-claude-sonnet-4-6",
        provider="bedrock",
        model="eu.anthropic.claude-sonnet-4-6",
        location="EU",
        label="Claude Sonnet 4.6 (AWS Bedrock, EU)",
        # Anthropic's models overview (docs.anthropic.com/en/docs/about-claude/models/overview):
        # a 200K context window and 64K max output (Sonnet's 1M window is a beta header we don't send).
        context_window_tokens=200_000,
        max_output_tokens=64_000,
        **SONNET_4_6,
    ),
    ModelOption(
        id="anthropic-claude-haiku-4-5",
        provider="anthropic",
        model="claude-haiku-4-5",
        location="US",
        label="Claude Haiku 4.5 (Anthropic)",
        # Anthropic's models overview (docs.anthropic.com/en/docs/about-claude/models/overview):
        # a 200K context window and 64K max output (Sonnet's 1M window is a beta header we don't send).
        context_window_tokens=200_000,
        max_output_tokens=64_000,
        **HAIKU_4_5,
    ),
    ModelOption(
        id="anthropic-claude-sonnet-4-6",
        provider="anthropic",
        model="claude-sonnet-4-6",
        location="US",
        label="Claude Sonnet 4.6 (Anthropic)",
        # Anthropic's models overview (docs.anthropic.com/en/docs/about-claude/models/overview):
        # a 200K context window and 64K max output (Sonnet's 1M window is a beta header we don't send).
        context_window_tokens=200_000,
        max_output_tokens=64_000,
        **SONNET_4_6,
    ),
)
_BY_ID = {option.id: option for option in CATALOG}


def model_option(option_id: str) -> ModelOption:
    """The option with this id; KeyError when there is none."""
    return _BY_ID[option_id]


def unusable_reason(option: ModelOption, *, api_key: str = "") -> str | None:
    """Why this option cannot be used now (missing settings, data residency),
    or None when it can. `api_key`, an organization's own key, stands in for
    the deployment's; the residency rules apply either way."""
    reasons = _REASONS[option.provider](option, api_key)
    return "; ".join(reasons) or None


def _infomaniak_reasons(option: ModelOption, api_key: str) -> list[str]:
    reasons = [] if api_key or settings.INFOMANIAK_AI_TOKEN else ["INFOMANIAK_AI_TOKEN is not set"]
    if not (settings.INFOMANIAK_AI_PRODUCT_ID or settings.INFOMANIAK_AI_BASE_URL):
        reasons.append("INFOMANIAK_AI_PRODUCT_ID is not set")
    return reasons


def _bedrock_reasons(option: ModelOption, api_key: str) -> list[str]:
    reasons = [] if api_key or settings.BEDROCK_API_KEY else ["BEDROCK_API_KEY is not set"]
    region = settings.BEDROCK_REGION
    if not region:
        reasons.append("BEDROCK_REGION is not set")
    elif region not in BEDROCK_ALLOWED_REGIONS:
        reasons.append(f"BEDROCK_REGION {region} is not an EU or Swiss region (allowed: {_allowed_regions()})")
    if not option.model.startswith("eu."):
        reasons.append(f"Bedrock model {option.model} is not an EU (eu.) inference profile")
    return reasons


def _anthropic_reasons(option: ModelOption, api_key: str) -> list[str]:
    reasons = [] if api_key or settings.ANTHROPIC_API_KEY else ["ANTHROPIC_API_KEY is not set"]
    if not (settings.DEBUG or settings.ASSISTANT_ALLOW_US_PROCESSING):
        reasons.append("processed in the US: set ASSISTANT_ALLOW_US_PROCESSING=1 to allow it")
    return reasons


_REASONS = {
    "offline": lambda option, api_key: [],
    "infomaniak": _infomaniak_reasons,
    "bedrock": _bedrock_reasons,
    "anthropic": _anthropic_reasons,
}


def _allowed_regions() -> str:
    return ", ".join(sorted(BEDROCK_ALLOWED_REGIONS))


def selected_option() -> ModelOption:
    """The option ASSISTANT_MODEL names; when it is empty, the default
    (`default_option_id`). A name that is unknown or unusable is a
    configuration error, never a silent fallback to another provider (that
    could move data elsewhere)."""
    option_id = settings.ASSISTANT_MODEL
    if not option_id:
        return model_option(default_option_id())
    if option_id not in _BY_ID:
        known = ", ".join(_BY_ID)
        raise ImproperlyConfigured(f"ASSISTANT_MODEL={option_id!r} is not a known model option (known: {known}).")
    option = _BY_ID[option_id]
    reason = unusable_reason(option)
    if reason:
        raise ImproperlyConfigured(f"ASSISTANT_MODEL={option_id!r} cannot be used: {reason}.")
    return option


def default_option_id() -> str:
    """Without ASSISTANT_MODEL: outside development, Infomaniak (the seeds'
    default) once its credentials are set; otherwise the offline demo model,
    which a production server refuses to start with (`refuse_unnamed_demo_model`)."""
    if not settings.DEBUG and settings.INFOMANIAK_AI_TOKEN and settings.INFOMANIAK_AI_PRODUCT_ID:
        return INFOMANIAK_DEFAULT_ID
    return OFFLINE_ID


def refuse_unnamed_demo_model() -> None:
    """The system check providers.E001 (providers.checks), which a production
    server, worker or beat runs at its start (foundation.startup): real people
    must never be answered by the demo model by accident. Management commands
    and tests are not refused."""
    if settings.DEBUG or settings.ASSISTANT_MODEL:
        return
    if default_option_id() == OFFLINE_ID:
        raise ImproperlyConfigured(
            "No model is configured and DEBUG is off: set ASSISTANT_MODEL to a model option "
            "(`manage.py assistant_models` lists them), set INFOMANIAK_AI_TOKEN and INFOMANIAK_AI_PRODUCT_ID "
            "for Infomaniak, or name the demo model explicitly with ASSISTANT_MODEL=offline."
        )


def check_residency() -> None:
    """At start-up: refuse to run with a selected model that breaks the rules,
    or with a Bedrock region outside the EU and Switzerland (any Bedrock call,
    with an organization's own key too, would go there). Nothing configured is fine."""
    selected_option()
    region = settings.BEDROCK_REGION
    if region and region not in BEDROCK_ALLOWED_REGIONS:
        raise ImproperlyConfigured(
            f"BEDROCK_REGION={region!r} is not an EU or Swiss region (allowed: {_allowed_regions()})."
        )


def infomaniak_base_url() -> str:
    return settings.INFOMANIAK_AI_BASE_URL or INFOMANIAK_DEFAULT_BASE_URL.format(
        product_id=settings.INFOMANIAK_AI_PRODUCT_ID
    )


def client_for(option: ModelOption, *, api_key: str = "", max_retries: int = 2) -> ModelClient:
    """A streaming client for this option. `api_key` overrides the deployment's
    key (an organization's own). Raises ProviderError("refused") when the option
    may not be used now, so no request leaves for a refused destination."""
    reason = unusable_reason(option, api_key=api_key)
    if reason:
        raise ProviderError("refused", f"{option.id}: {reason}")
    # Imported here so the catalog (read at start-up) does not load the SDKs.
    if option.provider == "offline":
        from assistant_engine.providers.clients.offline import OfflineModelClient

        return OfflineModelClient()
    if option.provider == "infomaniak":
        from assistant_engine.providers.clients.openai_compat import OpenAICompatClient

        key = api_key or settings.INFOMANIAK_AI_TOKEN
        return OpenAICompatClient(
            model=option.model, api_key=key, base_url=infomaniak_base_url(), max_retries=max_retries
        )
    from assistant_engine.providers.clients.anthropic_client import AnthropicClient

    if option.provider == "bedrock":
        key = api_key or settings.BEDROCK_API_KEY
        return AnthropicClient.bedrock(
            model=option.model, region=settings.BEDROCK_REGION, api_key=key, max_retries=max_retries
        )
    key = api_key or settings.ANTHROPIC_API_KEY
    return AnthropicClient.direct(model=option.model, api_key=key, max_retries=max_retries)

"""What a worker process keeps from turn to turn: the tools' specs as sent to
the model, and the deployment's SDK clients (their connection pools)."""

import json
import os
import threading
from functools import lru_cache

from django.conf import settings

from assistant_engine.providers.catalog import ModelOption, client_for, model_option
from assistant_engine.providers.clients.base import ModelClient, ToolSpec
from assistant_engine.tools import framework
from assistant_engine.tools.registry import all_tools


@lru_cache(maxsize=8)
def _specs_for(toolsets: tuple[str, ...]) -> tuple[list[ToolSpec], int]:
    specs = framework.tool_specs(all_tools())
    return specs, len(json.dumps([vars(spec) for spec in specs]).encode())


def tool_specs_and_size() -> tuple[list[ToolSpec], int]:
    """The tools' specs as sent to the model, and their size: per process,
    since declarations do not change between turns (rebuilding the JSON
    Schemas took ~7 ms a turn). Keyed by the setting, as the registry is."""
    return _specs_for(tuple(settings.ASSISTANT_TOOLSETS))


# What shapes a deployment's SDK client: a change of any makes a new one.
_CLIENT_SETTINGS = (
    "DEBUG", "ASSISTANT_ALLOW_US_PROCESSING", "ANTHROPIC_API_KEY", "BEDROCK_API_KEY", "BEDROCK_REGION",
    "INFOMANIAK_AI_TOKEN", "INFOMANIAK_AI_PRODUCT_ID", "INFOMANIAK_AI_BASE_URL",
)
_CLIENT_ENVIRONMENT = ("ANTHROPIC_BASE_URL", "ANTHROPIC_BEDROCK_BASE_URL", "OPENAI_BASE_URL")


@lru_cache(maxsize=16)
def _client_of(option_id: str, shape: tuple) -> ModelClient:
    return client_for(model_option(option_id))


def deployment_client(option: ModelOption) -> ModelClient:
    """The option's client with the deployment's own key, per process: the
    SDK's client (its HTTP connection pool) is reused from turn to turn. Keyed
    by the settings and environment that shape it. (An organization's own key
    is never kept here.)"""
    shape = tuple(getattr(settings, name, None) for name in _CLIENT_SETTINGS)
    # Locked: lru_cache does not hold concurrent misses back, and a worker's
    # threads (Celery's threads pool) starting together would each build one.
    with _CLIENT_LOCK:
        return _client_of(option.id, shape + tuple(os.environ.get(name) for name in _CLIENT_ENVIRONMENT))


_CLIENT_LOCK = threading.Lock()

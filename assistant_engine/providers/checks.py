"""System checks: a production server, worker or beat refuses to start on them
(foundation.startup), and `manage.py check --deploy` reports them."""

from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from assistant_engine.foundation.startup import STARTUP
from assistant_engine.providers.catalog import refuse_unnamed_demo_model


@checks.register(STARTUP, deploy=True)
def unnamed_demo_model(app_configs, **kwargs) -> list[checks.CheckMessage]:
    """Real people must never be answered by the demo model by accident."""
    try:
        refuse_unnamed_demo_model()
    except ImproperlyConfigured as refusal:
        return [checks.Error(str(refusal), id="assistant_providers.E001")]
    return []


@checks.register(STARTUP, deploy=True)
def keys_secret_set(app_configs, **kwargs) -> list[checks.CheckMessage]:
    """Organizations' provider keys are sealed under ASSISTANT_KEYS_SECRET: a
    product that installs the engine must set it (the demo's settings do)."""
    from django.conf import settings

    if not settings.ASSISTANT_KEYS_SECRET:
        return [checks.Error("ASSISTANT_KEYS_SECRET is not set: provider keys could not be sealed.",
                             id="assistant_providers.E002")]
    return []

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

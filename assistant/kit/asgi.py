"""`assistant.kit.asgi_application`: the product's ASGI application with the
engine's MCP server beside it, under the prefix the product included the
engine's urls at (assistant_engine/surfaces/mcp/asgi.py)."""

from django.urls import reverse

from assistant_engine.foundation.startup import refuse_to_start_on_errors
from assistant_engine.surfaces.mcp.asgi import with_mcp


def engine_prefix() -> str:
    """Where `assistant.kit.urls` is included: "" at the root, "/helper" under helper/."""
    return reverse("web-chat").rstrip("/")


def asgi_application(django_app, prefix: str | None = None):
    """Call it with the product's `get_asgi_application()` (the apps are loaded
    then). A production server refuses to start on an error of the start-up
    checks (no model named, foundation.startup)."""
    refuse_to_start_on_errors()
    return with_mcp(django_app, engine_prefix() if prefix is None else prefix)

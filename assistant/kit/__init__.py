"""The engine's public surface: all a Django product imports (docs/install.md).

    from assistant import kit

    INSTALLED_APPS += [app for app in kit.ENGINE_APPS if app not in INSTALLED_APPS]
    MIDDLEWARE += [m for m in kit.ENGINE_MIDDLEWARE if m not in MIDDLEWARE]
    urlpatterns += [path("helper/", include("assistant.kit.urls"))]   # any prefix
    app.conf.beat_schedule = {**app.conf.beat_schedule, **kit.BEAT_SCHEDULE}
    application = kit.asgi_application(get_asgi_application())         # MCP under the prefix

The settings a product sets: ASSISTANT_MEMBER_RESOLVER (its guard: request ->
{tenant, tenant_name, user, admin} | None), ASSISTANT_DEFAULT_MONTHLY_CREDITS,
ASSISTANT_TOOLSETS (its tools, written with the names below),
ASSISTANT_KEYS_SECRET (production), ASSISTANT_LOGOUT_URL (its sign-out).
Every other engine setting has a default (assistant_engine/foundation/
engine_settings.py, each from its environment variable). The engine's API does
not read the product's REST_FRAMEWORK. Names here are stable; anything else
in the engine's packages may move.
"""

from importlib import import_module

__all__ = [
    "ADMIN_APP",
    "BEAT_SCHEDULE",
    "ENGINE_APPS",
    "ENGINE_MIDDLEWARE",
    "ContextTitle",
    "Description",
    "Member",
    "Tool",
    "ToolError",
    "ToolInput",
    "ToolNotFound",
    "Toolset",
    "asgi_application",
]

# In place of "django.contrib.admin" in the product's INSTALLED_APPS: Django's
# admin site, whose autocomplete also leaves the staff access trace (every
# engine admin page that shows a person's data does, on any admin site).
ADMIN_APP = "assistant_engine.organizations.admin_site.TracedAdminConfig"

# Appended to the product's INSTALLED_APPS, skipping those it already has. The
# organizations app comes first: it applies the engine's setting defaults.
ENGINE_APPS = [
    "assistant_engine.organizations",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "knox",
    "axes",
    "csp",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "conversations",
    "credits",
    "assistant_engine.providers",
    "assistant",
    "assistant_engine.surfaces.telegram",
    "assistant_engine.surfaces.mcp",
    "assistant_engine.web",
]

# Appended to the product's MIDDLEWARE, skipping those it has: Django's own
# session, locale, CSRF and auth (the product's login signs the person in), the
# API's body limit, no-store for pages carrying a person's data, the
# Content-Security-Policy (with the nonce the engine's scripts carry) and
# django-axes last, as it requires.
ENGINE_MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "assistant_engine.foundation.middleware.ApiBodyLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "assistant_engine.foundation.middleware.NoStoreForPeopleMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "assistant_engine.foundation.middleware.DatabaseBusyMiddleware",
    "csp.middleware.CSPMiddleware",
    "axes.middleware.AxesMiddleware",
]


# The names a product's settings module can't import yet (they need the apps
# loaded) are loaded on first use: `from assistant.kit import Tool` in a tools
# module, `kit.ENGINE_APPS` in settings.
_LAZY = {
    "BEAT_SCHEDULE": "assistant_engine.foundation.beat",
    "asgi_application": "assistant.kit.asgi",
    "Member": "assistant_engine.organizations.members",
    "ContextTitle": "assistant_engine.tools",
    "Description": "assistant_engine.tools",
    "Tool": "assistant_engine.tools",
    "ToolError": "assistant_engine.tools",
    "ToolInput": "assistant_engine.tools",
    "ToolNotFound": "assistant_engine.tools",
    "Toolset": "assistant_engine.tools",
}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'assistant.kit' has no attribute {name!r}")
    return getattr(import_module(_LAZY[name]), name)

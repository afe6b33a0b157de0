"""Every URL the engine serves, for a product to include once at the prefix it
chooses: `path("helper/", include("assistant.kit.urls"))`. The API
(`api/`, its schema and docs), the esm-ai-memory contract (`ai/`), Telegram's
webhook and link page, and the browser UI's pages and the panel's fragments.
Every link the engine renders, and every path its scripts build, follows the
prefix (reverse() and the roots the pages render). MCP is served beside Django
at the same prefix by `assistant.kit.asgi_application`.

The engine's own sign-in pages are not here: the product signs people in
(settings.LOGIN_URL) and names its sign-out in ASSISTANT_LOGOUT_URL.
"""

from django.urls import include, path

from assistant_engine.organizations.api_schema import EngineSchemaView, EngineSwaggerView
from assistant_engine.web.urls import pages

# /api/docs/ serves Swagger UI from the app (drf-spectacular-sidecar) under the
# site's Content-Security-Policy (the template carries the nonce).
urlpatterns = [
    path("api/schema/", EngineSchemaView.as_view(), name="schema"),
    path("api/docs/", EngineSwaggerView.as_view(url_name="schema", template_name="assistant/swagger_ui.html"),
         name="api-docs"),
    path("api/", include("conversations.urls")),
    path("api/", include("credits.urls")),
    path("api/", include("assistant.urls")),
    # The esm-ai-memory contract, served as its clients call it.
    path("ai/", include("assistant_engine.surfaces.ai_memory.urls")),
    # Telegram: the webhook and the page that links an account.
    path("telegram/", include("assistant_engine.surfaces.telegram.urls")),
    # The browser UI: chat, organization, tokens, data, the panel's fragments.
    path("", include(pages)),
]

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

# /api/docs/ serves Swagger UI from the app (drf-spectacular-sidecar, settings'
# SPECTACULAR_SETTINGS), under the site's Content-Security-Policy.

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema", template_name="assistant/swagger_ui.html"),
         name="api-docs"),
    path("api/", include("conversations.urls")),
    path("api/", include("credits.urls")),
    path("api/", include("assistant.urls")),
    # The esm-ai-memory contract, served as its clients call it.
    path("ai/", include("assistant_engine.surfaces.ai_memory.urls")),
]

# Telegram: the webhook and the page that links an account (surfaces/telegram/).
urlpatterns += [path("telegram/", include("assistant_engine.surfaces.telegram.urls"))]

# The host product's own pages (notes, inbox, sent mail), each with the assistant panel.
urlpatterns += [path("", include("workspace.urls"))]

# The browser UI (login, chat, data page).
urlpatterns += [path("", include("assistant_engine.web.urls"))]

from django.contrib import admin
from django.urls import include, path

from assistant_engine.web.urls import sign_in

# The demo product: the staff admin, the engine at the site's root (the API,
# /ai/, Telegram, the browser UI: assistant.kit.urls, which any product
# includes at its own prefix), the host product's own pages (notes, inbox,
# sent mail, each with the assistant panel) and the engine's sign-in pages.
urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("assistant.kit.urls")),
    path("", include("workspace.urls")),
    path("", include(sign_in)),
]

# The product's own pages, in the person's language (config/error_pages.py does it under DEBUG too).
handler404 = "config.error_pages.not_found"
handler403 = "config.error_pages.forbidden"

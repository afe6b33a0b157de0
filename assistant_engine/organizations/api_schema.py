"""The engine's API document and its Swagger page, wherever a product mounts
the engine and whatever its own drf-spectacular settings say.

The document covers the engine's API views (MemberAPIView) only, not a product's
own DRF views beside it, under the engine's settings (foundation/openapi_settings.py)
with the path prefix the product chose, so tags and operation ids read the same
at /api/ and at /helper/api/.
"""

import re
from contextlib import contextmanager

from django.urls import reverse
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.settings import patched_settings
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from assistant_engine.foundation.openapi import extend_schema
from assistant_engine.foundation.openapi_settings import ENGINE_SCHEMA_SETTINGS
from assistant_engine.organizations.api import MemberAPIView

# drf-spectacular refuses SERVE_* names in a view's custom settings (they are
# the view's attributes); the engine's document leaves its own view out anyway.
PATCHABLE = {name: value for name, value in ENGINE_SCHEMA_SETTINGS.items() if not name.startswith("SERVE_")}


def engine_schema_settings() -> dict:
    """The engine's settings, with the prefix of its API where this site serves it."""
    api_root = reverse("schema").removesuffix("schema/")
    return {**PATCHABLE, "SCHEMA_PATH_PREFIX": re.escape(api_root)}


@contextmanager
def engine_settings_applied():
    with patched_settings(engine_schema_settings()):
        yield


class EngineSchemaGenerator(SchemaGenerator):
    def _get_paths_and_endpoints(self):
        return [
            endpoint for endpoint in super()._get_paths_and_endpoints()
            if isinstance(endpoint[3], MemberAPIView)
        ]


class EngineSchemaView(SpectacularAPIView):
    generator_class = EngineSchemaGenerator

    @extend_schema(exclude=True)  # the document doesn't describe itself
    def get(self, request, *args, **kwargs):
        with engine_settings_applied():
            return self._get_schema_response(request)


class EngineSwaggerView(SpectacularSwaggerView):
    title = ENGINE_SCHEMA_SETTINGS["TITLE"]

    @extend_schema(exclude=True)
    def get(self, request, *args, **kwargs):
        # The Swagger UI's files come from the app itself (the sidecar), under
        # the site's Content-Security-Policy, whatever the product chose for its own.
        with engine_settings_applied():
            return super().get(request, *args, **kwargs)

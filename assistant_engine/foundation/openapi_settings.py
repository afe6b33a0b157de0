"""drf-spectacular's settings for the engine's API document.

The engine's schema view applies them over whatever the product's
SPECTACULAR_SETTINGS say (a product documents its own API as it likes), with
the path prefix of wherever the product included the engine's URLs. A plain
module, so a settings module can import it.
"""

ENGINE_SCHEMA_SETTINGS = {
    "TITLE": "Assistant engine API",
    "DESCRIPTION": "Conversations, chat turns, confirmation cards and credits, "
    "scoped to the authenticated person in the active organization (X-Organization header).",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # PATCH bodies as the views validate them (a rename requires its title),
    # not a "Patched…" copy with every field optional.
    "COMPONENT_SPLIT_PATCH": False,
    # Tags (and the generated client's modules) come from the path after /api/;
    # left to guess, the prefix would shrink to "/" once /ai/ exists beside it.
    "SCHEMA_PATH_PREFIX": r"/api/",
    # Swagger UI from the app itself (drf-spectacular-sidecar), not a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Path ids are parsed by the views (a malformed one: 400 `invalid_id`); see foundation/converters.py.
    "PATH_CONVERTER_OVERRIDES": {"api_id": {"type": "string", "format": "uuid"}},
    # One stable name per status set (several components have a `status`).
    "ENUM_NAME_OVERRIDES": {
        "ConversationStatusEnum": "conversations.models.Thread.Status",
        "MessageStatusEnum": "conversations.models.Message.Status",
        "TurnStatusEnum": "assistant.models.Turn.Status",
        "ActionCardStatusEnum": "assistant.models.ActionCard.Status",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "assistant_engine.foundation.openapi.postprocess_links",
        "assistant_engine.foundation.openapi.postprocess_optional_fields",
    ],
}

from django.apps import AppConfig


class McpSurfaceConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "assistant_engine.surfaces.mcp"
    # Not "mcp": that label would read like the SDK's package.
    label = "mcp_surface"
    verbose_name = "MCP"

    def ready(self) -> None:
        from assistant import cards
        from assistant_engine.surfaces.mcp import personal_data
        from assistant_engine.surfaces.mcp.record import SURFACE

        personal_data.register()
        # The MCP client holds the person's token: it must not confirm what it proposed.
        cards.decide_in_person_only(SURFACE)

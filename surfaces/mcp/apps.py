from django.apps import AppConfig


class McpSurfaceConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "surfaces.mcp"
    # Not "mcp": that label would read like the SDK's package.
    label = "mcp_surface"
    verbose_name = "MCP"

    def ready(self) -> None:
        from surfaces.mcp import personal_data

        personal_data.register()

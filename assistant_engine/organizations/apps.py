from django.apps import AppConfig


class OrganizationsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "assistant_engine.organizations"
    label = "assistant_organizations"
    verbose_name = "Organizations"

    def __init__(self, app_name, app_module):
        super().__init__(app_name, app_module)
        # The engine's settings as defaults under a product's own, before any
        # model of any app is imported (this app is the first of ENGINE_APPS).
        from assistant_engine.foundation.defaults import apply_engine_defaults

        apply_engine_defaults()

    def ready(self) -> None:
        from assistant_engine.organizations import access_log, signals  # noqa: F401 - connects the receivers

        # The staff access log's part of a person's export and erasure.
        access_log.register()

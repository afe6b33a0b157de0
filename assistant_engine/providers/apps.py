from django.apps import AppConfig


class ProvidersConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "assistant_engine.providers"
    label = "assistant_providers"
    verbose_name = "Providers"

    def ready(self) -> None:
        from assistant_engine.providers import checks  # noqa: F401  (registers the system checks)
        from assistant_engine.providers.catalog import check_residency

        # Fail at start-up, not at the first turn, when the configured model
        # would process data where it may not (or cannot run at all).
        check_residency()

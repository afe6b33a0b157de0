from django.apps import AppConfig


class ProvidersConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "providers"

    def ready(self) -> None:
        from providers import checks  # noqa: F401  (registers the system checks)
        from providers.catalog import check_residency

        # Fail at start-up, not at the first turn, when the configured model
        # would process data where it may not (or cannot run at all).
        check_residency()

from django.apps import AppConfig


class AssistantConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "assistant"

    def ready(self) -> None:
        from assistant.providers import check_residency

        # Fail at start-up, not at the first turn, when the configured model
        # would process data where it may not (or cannot run at all).
        check_residency()

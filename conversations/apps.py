from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "conversations"

    def ready(self) -> None:
        from conversations import personal_data

        # Its part of a person's export and erasure (organizations.personal_data).
        personal_data.register()

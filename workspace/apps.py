from django.apps import AppConfig


class WorkspaceConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "workspace"

    def ready(self) -> None:
        from workspace import personal_data

        # Its part of a person's export and erasure (organizations.personal_data).
        personal_data.register()

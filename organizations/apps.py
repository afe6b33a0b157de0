from django.apps import AppConfig


class OrganizationsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "organizations"

    def ready(self) -> None:
        from organizations import access_log, signals  # noqa: F401 - connects the receivers

        # The staff access log's part of a person's export and erasure.
        access_log.register()

from django.apps import AppConfig


class OrganizationsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "assistant_engine.organizations"
    label = "assistant_organizations"
    verbose_name = "Organizations"

    def ready(self) -> None:
        from assistant_engine.organizations import access_log, signals  # noqa: F401 - connects the receivers

        # The staff access log's part of a person's export and erasure.
        access_log.register()

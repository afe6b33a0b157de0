from django.apps import AppConfig


class TelegramSurfaceConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "surfaces.telegram"
    # Not "telegram": that label would read like the python-telegram-bot package.
    label = "telegram_surface"
    verbose_name = "Telegram"

    def ready(self) -> None:
        from surfaces.telegram import personal_data

        personal_data.register()

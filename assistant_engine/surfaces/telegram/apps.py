import os

from django.apps import AppConfig


class TelegramSurfaceConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "assistant_engine.surfaces.telegram"
    # Not "telegram": that label would read like the python-telegram-bot package.
    label = "telegram_surface"
    verbose_name = "Telegram"

    def ready(self) -> None:
        from assistant_engine.surfaces.telegram import personal_data

        # python-telegram-bot's coming behaviour, now: durations such as a 429's
        # retry_after are timedeltas (tasks.retry_delay reads both), without a
        # deprecation warning at every 429.
        os.environ.setdefault("PTB_TIMEDELTA", "true")

        personal_data.register()

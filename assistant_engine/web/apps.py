from django.apps import AppConfig


class WebConfig(AppConfig):
    """The browser UI: the chat, the data page, the organization page, API tokens.

    It sits on top of the engine: it imports the assistant and the apps below
    it, and nothing imports it but config's urls (and the Telegram surface's
    linking page, which is a browser page too)."""

    name = "assistant_engine.web"
    label = "assistant_web"
    default_auto_field = "django.db.models.BigAutoField"

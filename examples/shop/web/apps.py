from django.apps import AppConfig


class WebConfig(AppConfig):
    # An app named `web`, as many products have: the engine's own is assistant_engine.web.
    name = "web"

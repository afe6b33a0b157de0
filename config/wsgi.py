"""WSGI entry point: used by `manage.py runserver` (`make run`); production
serves config/asgi.py. Refuses to start like it without a model named."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

from assistant.providers import refuse_unnamed_demo_model  # noqa: E402  (needs the apps loaded)

refuse_unnamed_demo_model()

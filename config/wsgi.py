"""WSGI entry point: used by `manage.py runserver` (`make run`); production
serves config/asgi.py. Refuses to start like it on an error of the start-up checks."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

from assistant_engine.foundation.startup import refuse_to_start_on_errors  # noqa: E402  (needs the apps loaded)

refuse_to_start_on_errors()

"""The production entry point: `scripts/serve.sh web` runs it under gunicorn
with uvicorn workers. Async views (the turn events stream) wait on the event
loop without holding a thread; sync views run in Django's thread pool.

A production server refuses to start without a model named (see
assistant.providers.refuse_unnamed_demo_model).
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_asgi_application()

from assistant.providers import refuse_unnamed_demo_model  # noqa: E402  (needs the apps loaded)

refuse_unnamed_demo_model()

"""The production entry point: `scripts/serve.sh web` runs it under gunicorn
with uvicorn workers. Async views (the turn events stream) wait on the event
loop without holding a thread; sync views run in Django's thread pool.

A production server refuses to start on an error of the start-up checks
(foundation.startup), such as no model named (providers.E001).
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_asgi_application()

from assistant.kit import asgi_application  # noqa: E402  (needs the apps loaded)

# /mcp and the ASGI lifespan go to the MCP server (surfaces/mcp), the rest to
# Django; it refuses to start on an error of the start-up checks.
application = asgi_application(application)

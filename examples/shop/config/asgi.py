import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_application = get_asgi_application()

from assistant.kit import asgi_application  # noqa: E402  (needs the apps loaded)

# The assistant's MCP server at /helper/mcp, beside the shop's pages.
application = asgi_application(django_application)

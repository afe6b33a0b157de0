"""The refusal to start a production server, worker or beat on a wrong setting.

An app registers a Django system check with the tag STARTUP (and `deploy=True`,
so `manage.py check --deploy` reports it and other management commands are not
refused); config's entry points (asgi.py, wsgi.py, celery.py) run those checks
once the apps are loaded and refuse to start on an error. So config names no
app for it, and the app keeps its rule.
"""

from django.apps import apps
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

STARTUP = "startup"


def refuse_to_start_on_errors() -> None:
    """Raise ImproperlyConfigured with every error of the STARTUP checks (needs the apps loaded)."""
    # Before the apps are loaded no app has registered its checks: that would pass silently.
    apps.check_apps_ready()
    errors = [
        message for message in checks.run_checks(include_deployment_checks=True, tags=[STARTUP])
        if message.is_serious()
    ]
    if errors:
        raise ImproperlyConfigured(" ".join(f"{error.msg} ({error.id})" for error in errors))

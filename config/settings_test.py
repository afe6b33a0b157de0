"""Explicit settings for the test suite.

DATABASE_URL selects the engine: unset → SQLite (a file, so worker processes
started by tests can share it); postgres://… → the server that `make test`
starts.
"""

import os
from pathlib import Path

os.environ.setdefault("SECRET_KEY", "test-only-secret-key-not-for-production")
os.environ.setdefault("DEBUG", "0")
os.environ.setdefault("ASSISTANT_KEYS_SECRET", "test-only-keys-secret")
os.environ.setdefault("EMAIL_BACKEND", "django.core.mail.backends.locmem.EmailBackend")
# Named, as production must (DEBUG is off here): the worker processes the tests
# start would refuse the demo model otherwise.
os.environ.setdefault("ASSISTANT_MODEL", "offline")
# On PostgreSQL: a race's threads (tests/races.py, up to 32) each keep a
# connection for the whole race; a pool that large keeps them all racing at once.
os.environ.setdefault("DATABASE_POOL_SIZE", "40")

from config.settings import *  # noqa: E402,F403
from config.settings import DATABASES, RUN_DIR  # noqa: E402

RUN_DIR.mkdir(parents=True, exist_ok=True)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file (worker processes started by tests open it too), one per test
    # process so that concurrent runs don't share it.
    DATABASES["default"]["TEST"] = {
        "NAME": os.environ.get("TEST_SQLITE_NAME") or str(RUN_DIR / f"test-db-{os.getpid()}.sqlite3")
    }

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
# The suite is not throttled unless a test sets a rate (REST_FRAMEWORK's
# DEFAULT_THROTTLE_RATES is this very dict), or the environment names one
# (THROTTLE_CHAT=…: the contract run's server keeps the throttles on, explicitly high).
THROTTLE_RATES.update({  # noqa: F405
    scope: None for scope in THROTTLE_RATES if f"THROTTLE_{scope.upper()}" not in os.environ  # noqa: F405
})
ALLOWED_HOSTS = ["*"]
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
OFFLINE_MODEL_CHUNK_DELAY_MS = 0

# A broker folder per test process; worker processes started by tests get the
# same folder through BROKER_DIR.
BROKER_DIR = Path(os.environ.get("BROKER_DIR") or RUN_DIR / f"test-broker-{os.getpid()}")
if CELERY_BROKER_URL.startswith("filesystem://"):  # noqa: F405
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
        # The folder holds the tasks of every test that enqueued without a
        # worker; a worker a test starts later takes them first, one per poll
        # (each is a turn no longer there: skipped at once). At the default 1 s
        # a poll, a long run's backlog delayed that test's own turn past its
        # timeout; at 0.05 s it drains in a moment.
        "polling_interval": 0.05,
    }

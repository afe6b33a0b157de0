"""The shop's settings: a product of its own (its users sign in with their
e-mail, its tenants are stores) that installed the assistant engine."""

import os
from pathlib import Path

from assistant import kit

BASE_DIR = Path(__file__).resolve().parent.parent
DEBUG = os.environ.get("SHOP_DEBUG", "1") == "1"
SECRET_KEY = os.environ.get("SHOP_SECRET_KEY", "shop-example-only-secret")
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]

INSTALLED_APPS = [
    kit.ADMIN_APP,  # Django's admin, whose autocomplete leaves the staff access trace
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "accounts",
    "stores",
    "orders",
    "web",
]
INSTALLED_APPS += [app for app in kit.ENGINE_APPS if app not in INSTALLED_APPS]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
MIDDLEWARE += [middleware for middleware in kit.ENGINE_MIDDLEWARE if middleware not in MIDDLEWARE]

ROOT_URLCONF = "config.urls"
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "DIRS": [],
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages",
    ]},
}]

# SQLite shared by the web process and the assistant's Celery worker: write
# transactions take the lock when they begin (a deferred one that must upgrade
# fails at once with "database is locked" while the other process writes), and
# WAL lets the pages read while the worker writes.
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3",
                         "NAME": os.environ.get("SHOP_DATABASE", str(BASE_DIR / "shop.sqlite3")),
                         "OPTIONS": {"transaction_mode": "IMMEDIATE", "timeout": 30,
                                     "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"}}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_USER_MODEL = "accounts.User"
LOGIN_URL = "sign-in"
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
STATIC_URL = "static/"
USE_TZ = True

# The shop's own API, if it had one, keeps its own policies: the engine's API doesn't read these.
REST_FRAMEWORK = {"DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.BasicAuthentication"]}

CELERY_BROKER_URL = os.environ.get("SHOP_BROKER_URL", "redis://127.0.0.1:6379/0")
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1

# --- The assistant (docs/install.md) ---------------------------------------------
ASSISTANT_MEMBER_RESOLVER = "stores.assistant.resolve_member"
ASSISTANT_DEFAULT_MONTHLY_CREDITS = 500
ASSISTANT_TOOLSETS = ["orders.assistant_tools.TOOLSET"]
ASSISTANT_LOGOUT_URL = "sign-out"
# Organizations' own provider keys are sealed under this secret: set it in production.
ASSISTANT_KEYS_SECRET = os.environ.get("SHOP_ASSISTANT_KEYS_SECRET", "shop-example-only-keys-secret")

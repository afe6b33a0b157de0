"""Settings, read from the environment with safe local defaults.

Every variable is listed in the README. Production (DEBUG off) refuses to start
without SECRET_KEY, ASSISTANT_KEYS_SECRET and an explicit EMAIL_BACKEND.
"""

from datetime import timedelta
from pathlib import Path

from csp.constants import NONCE, NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from assistant import kit
from assistant_engine.foundation.engine_settings import *  # noqa: F403 (the engine's own, every one from the environment)
from assistant_engine.foundation.env import env_bool, env_int, env_list, env_str
from assistant_engine.foundation.openapi_settings import ENGINE_SCHEMA_SETTINGS
from config.database import database_from_url

BASE_DIR = Path(__file__).resolve().parent.parent
RUN_DIR = Path(env_str("RUN_DIR", str(BASE_DIR / ".run")))

DEBUG = env_bool("DEBUG", False)

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = "insecure-local-development-key-only-used-when-DEBUG-is-on"  # noqa: S105
# Older secrets that still verify sessions and signatures while SECRET_KEY rotates.
SECRET_KEY_FALLBACKS = env_list("SECRET_KEY_FALLBACKS", [])
# Organizations' own provider keys are sealed under a key derived from this
# secret (providers/sealing.py), not from SECRET_KEY: rotating SECRET_KEY leaves
# them readable. Rotate it with the fallbacks and `manage.py reseal_provider_keys`.
ASSISTANT_KEYS_SECRET = env_str("ASSISTANT_KEYS_SECRET")
if not ASSISTANT_KEYS_SECRET:
    if not DEBUG:
        raise ImproperlyConfigured("ASSISTANT_KEYS_SECRET must be set when DEBUG is off.")
    ASSISTANT_KEYS_SECRET = "insecure-local-development-keys-secret"  # noqa: S105
ASSISTANT_KEYS_SECRET_FALLBACKS = env_list("ASSISTANT_KEYS_SECRET_FALLBACKS", [])

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# The engine's apps as any product adds them (assistant/kit), then the demo product's.
INSTALLED_APPS = [
    kit.ADMIN_APP,  # django.contrib.admin, its autocomplete traced
    *kit.ENGINE_APPS,
    "workspace",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "assistant_engine.foundation.middleware.ApiBodyLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The UI's language: the person's choice (a cookie, set from their account at
    # login), else the browser's Accept-Language, else English. URLs carry no language.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "assistant_engine.foundation.middleware.NoStoreForPeopleMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # No database connection free within DATABASE_POOL_TIMEOUT: a 503 with Retry-After, not a 500.
    "assistant_engine.foundation.middleware.DatabaseBusyMiddleware",
    # The product's own 404 and 403 pages, also under DEBUG (config/error_pages.py).
    "config.error_pages.ProductErrorPagesMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes requires: it turns a locked-out login into 429.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


DATABASE_URL = env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}")
DATABASES = {"default": database_from_url(DATABASE_URL)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en"
# The browser UI's languages (locale/, compiled catalogs committed as Django's own are).
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("fr", "Français"), ("it", "Italiano")]
# The engine's catalogs live in its web app (installed with it); `make messages` writes there.
LOCALE_PATHS = [BASE_DIR / "assistant_engine" / "web" / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
# WhiteNoise (middleware above) serves STATIC_ROOT in production, compressed
# copies made by collectstatic (`scripts/serve.sh release`).
# In development (`make run`, an ASGI server, no collectstatic), WhiteNoise serves
# the apps' static files straight from their folders, picking up edits.
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "web-chat"
LOGOUT_REDIRECT_URL = "login"

# Database sessions marked with their user: an erasure deletes the person's sessions.
SESSION_ENGINE = "assistant_engine.organizations.sessions"
SESSION_COOKIE_SECURE = not DEBUG and env_bool("SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
# The language cookie holds only a language code; a year, like the person's choice it mirrors.
LANGUAGE_COOKIE_SECURE = SESSION_COOKIE_SECURE
LANGUAGE_COOKIE_HTTPONLY = True
LANGUAGE_COOKIE_SAMESITE = "Lax"
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600

# --- HTTPS (behind a proxy), checked by `manage.py check --deploy` -----------
# The proxy terminates TLS and says so in X-Forwarded-Proto; it must overwrite
# that header from clients. Off by default: set them in production (README).
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("SECURE_PROXY_SSL", False) else None
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SECURE_REFERRER_POLICY = "same-origin"

# --- Content-Security-Policy (django-csp 4), on every response --------------
# The pages, the admin and the API docs run no inline script and load nothing
# from another origin. The one inline script and style of the Swagger page
# carry the request's nonce (templates/drf_spectacular/swagger_ui.html); the
# nonce appears in the header only on a response that used it.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, NONCE],
        "img-src": [SELF, "data:"],
        "connect-src": [SELF],
        "font-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    },
}

# --- Failed logins (django-axes) ---------------------------------------------
# After AXES_FAILURE_LIMIT wrong passwords for one username from one address,
# that pair is locked out (the login answers 429) for AXES_COOLOFF_MINUTES.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses a locked-out login before any password check
    "django.contrib.auth.backends.ModelBackend",
]
AXES_ENABLED = env_bool("AXES_ENABLED", True)
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("AXES_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# The client's address is REMOTE_ADDR unless AXES_PROXY_COUNT says how many
# proxies append to X-Forwarded-For: trusting that header without a proxy would
# let a client pick a fresh "address" for every guess.
AXES_IPWARE_PROXY_COUNT = env_int("AXES_PROXY_COUNT", 0) or None
AXES_IPWARE_PROXY_ORDER = "right-most"  # the hops our own proxies appended, not what the client sent
AXES_IPWARE_META_PRECEDENCE_ORDER = (
    ["HTTP_X_FORWARDED_FOR", "REMOTE_ADDR"] if AXES_IPWARE_PROXY_COUNT else ["REMOTE_ADDR"]
)

REST_FRAMEWORK = {
    # Token first, so an anonymous API client gets 401 with WWW-Authenticate.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "assistant_engine.organizations.tokens.OrganizationTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_THROTTLE_CLASSES": [
        "assistant_engine.foundation.throttles.AnonymousThrottle",
        "assistant_engine.foundation.throttles.PersonActionThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": THROTTLE_RATES,  # noqa: F405 (the engine's settings)
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["assistant_engine.foundation.parsers.SafeJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "assistant_engine.foundation.openapi.ApiAutoSchema",
    "EXCEPTION_HANDLER": "assistant_engine.foundation.api_errors.api_exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

# The API document's settings are the engine's (foundation/openapi_settings.py):
# `manage.py spectacular` writes the same document /api/schema/ serves.
SPECTACULAR_SETTINGS = ENGINE_SCHEMA_SETTINGS

# --- Redis and Celery ------------------------------------------------------
REDIS_URL = env_str("REDIS_URL")
# Throttle counters are shared by every web process through Redis when there
# is one; otherwise each process counts alone (a single machine).
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
CELERY_TASK_ALWAYS_EAGER = False

# --- Email (outgoing mail of the host product) -------------------------------
# Outside DEBUG the backend must be chosen: the console backend would print
# confirmed mails (their bodies) to the server's output and report them sent.
EMAIL_BACKEND = env_str("EMAIL_BACKEND")
if not EMAIL_BACKEND:
    if not DEBUG:
        raise ImproperlyConfigured(
            "EMAIL_BACKEND must be set when DEBUG is off (e.g. django.core.mail.backends.smtp.EmailBackend)."
        )
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "assistant@localhost")

# JSON lines (ids, kinds, counts, durations; never conversation text) outside
# development; a readable line under DEBUG. See config/logging.py.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {"()": "config.logging.JsonLinesFormatter"},
        "readable": {"()": "config.logging.ReadableFormatter"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "readable" if DEBUG else "json"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # httpx logs every request's URL, and a Telegram Bot API URL carries the bot's token.
    # The MCP transport, stateless, logs "Terminating session: None" after every request.
    "loggers": {"httpx": {"level": "WARNING"}, "mcp.server.streamable_http": {"level": "WARNING"}},
}

# --- Celery ----------------------------------------------------------------
# Redis when REDIS_URL is set; otherwise a broker that needs no server (a
# folder), so `make run` works on a fresh machine. Neither redelivers a task
# whose worker was killed: the database is the truth about turns, and a
# sweeper re-enqueues or fails turns no worker took or finished.
BROKER_DIR = Path(env_str("BROKER_DIR", str(RUN_DIR / "broker")))
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", REDIS_URL or "filesystem://")
CELERY_BROKER_TRANSPORT_OPTIONS = (
    {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
    if CELERY_BROKER_URL.startswith("filesystem://")
    # Above the longest turn (8 min), so Redis does not redeliver a running
    # turn; short connect timeouts so a publish to a dead Redis fails fast (503).
    else {
        "visibility_timeout": 3600,
        "socket_connect_timeout": env_int("CELERY_PUBLISH_TIMEOUT", 3, minimum=1),
        "socket_timeout": 10,
    }
)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# The engine's own settings (conversations, credits, the assistant and its
# models, maintenance jobs, cards, Telegram): a sibling module, so each stays short.

# The demo product's tools (workspace/): notes, inbox and sent mail.
ASSISTANT_TOOLSETS = env_list("ASSISTANT_TOOLSETS", ["workspace.tools.TOOLSET"])

"""The engine's own settings, each read from its environment variable with a
safe default: the API's bounds, conversations, credits, the assistant and its
models, the maintenance jobs, cards and the trifecta guard, Telegram. Every
variable is listed in the README.

The demo's settings import them all; a product that installs the engine sets
only the few docs/install.md names, and the engine applies these as defaults
for every name its settings leave unset (foundation/defaults.py)."""

import re
from datetime import timedelta

from django.core.exceptions import ImproperlyConfigured

from assistant_engine.foundation.env import env_bool, env_decimal, env_int, env_list, env_str

# --- API -------------------------------------------------------------------
# Largest accepted API request body (bytes); beyond, 413 payload_too_large.
API_MAX_BODY_BYTES = env_int("API_MAX_BODY_BYTES", 10 * 1024 * 1024, minimum=1024)
# What one conversation may store (UTF-8 text plus the JSON of its tool
# calls, raw results included) and how many messages: beyond, an upload is
# refused (413 conversation_too_large / 400 too_many_messages). Not the model's
# history bound: raw tool results are kept whole and can be large.
CONVERSATION_MAX_BYTES = env_int("CONVERSATION_MAX_BYTES", 25 * 1024 * 1024, minimum=1024)
CONVERSATION_MAX_MESSAGES = env_int("CONVERSATION_MAX_MESSAGES", 5000, minimum=1)
# Files attached to messages (conversations/files.py): the largest one, how
# many a message takes, a PDF's pages, and how long an upload no message
# claimed is kept.
FILE_MAX_BYTES = env_int("FILE_MAX_BYTES", 10 * 1024 * 1024, minimum=1024)
FILE_MAX_PER_MESSAGE = env_int("FILE_MAX_PER_MESSAGE", 5, minimum=1)
FILE_PDF_MAX_PAGES = env_int("FILE_PDF_MAX_PAGES", 100, minimum=1)
FILE_UNATTACHED_HOURS = env_int("FILE_UNATTACHED_HOURS", 24, minimum=1)
# A PDF's text is read by a worker in a child process (conversations/pdf_reading.py)
# within these bounds; past any of them it is refused as unreadable_pdf.
FILE_PDF_CPU_SECONDS = env_int("FILE_PDF_CPU_SECONDS", 10, minimum=1)
FILE_PDF_MEMORY_BYTES = env_int("FILE_PDF_MEMORY_BYTES", 512 * 1024 * 1024, minimum=64 * 1024 * 1024)
FILE_PDF_WALL_SECONDS = env_int("FILE_PDF_WALL_SECONDS", 30, minimum=1)
FILE_PDF_MAX_CONTENT_BYTES = env_int("FILE_PDF_MAX_CONTENT_BYTES", 8 * 1024 * 1024, minimum=64 * 1024)
FILE_PDF_MAX_CHARS = env_int("FILE_PDF_MAX_CHARS", 1_000_000, minimum=1000)
# PDFs being read at once, per person and per organization (429 past them): with the
# CPU bound above, what one member can make the workers spend.
FILE_PDF_READING_PER_PERSON = env_int("FILE_PDF_READING_PER_PERSON", 2, minimum=1)
FILE_PDF_READING_PER_ORGANIZATION = env_int("FILE_PDF_READING_PER_ORGANIZATION", 4, minimum=1)
# Storage: the bytes of files no message has taken yet, per person and per
# organization (429 until they are sent or purged), and all of an
# organization's stored files (413).
FILE_UNATTACHED_MAX_BYTES = env_int("FILE_UNATTACHED_MAX_BYTES", 60 * 1024 * 1024, minimum=1024)
FILE_ORGANIZATION_UNATTACHED_MAX_BYTES = env_int("FILE_ORGANIZATION_UNATTACHED_MAX_BYTES", 500 * 1024 * 1024,
                                                 minimum=1024)
FILE_ORGANIZATION_MAX_BYTES = env_int("FILE_ORGANIZATION_MAX_BYTES", 5 * 1024 * 1024 * 1024, minimum=1024)
# A file upload's body: the file plus the multipart framing (boundary, headers).
FILE_UPLOAD_FRAMING_BYTES = 64 * 1024
# A conversation upload's body may hold CONVERSATION_MAX_BYTES plus this much
# JSON framing (ids, dates, keys) per allowed message (foundation/middleware.py).
CONVERSATION_UPLOAD_FRAMING_BYTES = 1024
# Django's own parse limit lets the largest body through; ApiBodyLimitMiddleware
# applies each path's exact limit first.
DATA_UPLOAD_MAX_MEMORY_SIZE = max(
    API_MAX_BODY_BYTES, CONVERSATION_MAX_BYTES + CONVERSATION_MAX_MESSAGES * CONVERSATION_UPLOAD_FRAMING_BYTES
)

# API tokens (django-rest-knox): hashed, expiring, one organization each.
KNOX_TOKEN_MODEL = "assistant_organizations.ApiToken"  # noqa: S105 - a model name
# knox's own migrations create its default table even when the model is swapped:
# an unused table whose foreign key to auth_user would block PostgreSQL's
# TRUNCATE (test flushes). Without migrations, the swapped model gets no table.
MIGRATION_MODULES = {"knox": None}
API_TOKEN_DAYS = env_int("API_TOKEN_DAYS", 90, minimum=1)
REST_KNOX = {"TOKEN_TTL": timedelta(days=API_TOKEN_DAYS), "AUTH_HEADER_PREFIX": "Bearer"}
# Expired tokens deleted per transaction by the hourly purge (organizations.purge_expired_tokens).
API_TOKEN_PURGE_BATCH_SIZE = env_int("API_TOKEN_PURGE_BATCH_SIZE", 500, minimum=1)

# Requests per person (per client address when anonymous), "N/second|minute|hour|day".
THROTTLE_RATES = {
    "chat": env_str("THROTTLE_CHAT", "30/minute") or None,
    "uploads": env_str("THROTTLE_UPLOADS", "60/minute") or None,
    "cards": env_str("THROTTLE_CARDS", "60/minute") or None,
    "anon": env_str("THROTTLE_ANON", "60/minute") or None,
    "mcp": env_str("THROTTLE_MCP", "120/minute") or None,
}

# --- The turn's events stream ------------------------------------------------
# GET /api/turns/{id}/events: a keep-alive comment after this long without an
# event; without Redis, the database is read this often; a stream ends after
# STREAM_MAX_SECONDS (the browser reconnects with Last-Event-ID).
STREAM_HEARTBEAT_SECONDS = env_int("STREAM_HEARTBEAT_SECONDS", 15, minimum=1)
STREAM_POLL_SECONDS = env_int("STREAM_POLL_MS", 200, minimum=10) / 1000
STREAM_MAX_SECONDS = env_int("STREAM_MAX_SECONDS", 600, minimum=1)
# Database reads of a web process's open streams (their check, catch-ups and
# end) at once: each holds a connection while it reads, so a crowd following
# one turn needs this many connections per web process, not one per stream.
STREAM_DB_READS = env_int("STREAM_DB_READS", 4, minimum=1)

# --- Signing in and out: the product's own pages ------------------------------
# Where the engine's pages send a person to sign out (a URL name or a path);
# a product names its own. Signing in is settings.LOGIN_URL, Django's.
ASSISTANT_LOGOUT_URL = env_str("ASSISTANT_LOGOUT_URL", "logout")
# The product's guard (docs/install.md): a dotted path to
# `resolve(request) -> {tenant, tenant_name, user, admin} | None`; empty: the
# engine's own organizations and memberships (the demo).
ASSISTANT_MEMBER_RESOLVER = env_str("ASSISTANT_MEMBER_RESOLVER")
# Credits granted each month to a tenant's organization created on first use.
ASSISTANT_DEFAULT_MONTHLY_CREDITS = env_int("ASSISTANT_DEFAULT_MONTHLY_CREDITS", 1000, minimum=0)

# --- Conversations ---------------------------------------------------------
CONVERSATIONS_PAGE_SIZE = env_int("CONVERSATIONS_PAGE_SIZE", 50, minimum=1)

# --- Credits ---------------------------------------------------------------
# Credits reserved when a turn starts (1 credit = 10,000 micro-dollars).
# When an organization's use of its month's credits crosses one of these
# percentages, its admins get an e-mail, once per threshold and month (credits/alerts.py).
CREDIT_ALERT_PERCENTS = sorted({int(part) for part in env_str("CREDIT_ALERT_PERCENTS", "80,100").split(",")
                                if part.strip().isdigit() and 0 < int(part) <= 100})
# ... and when a person's spending crosses this share of their monthly cap (0: never).
CREDIT_ALERT_CAP_PERCENT = env_int("CREDIT_ALERT_CAP_PERCENT", 80, minimum=0)
CREDITS_RESERVATION = env_int("CREDITS_RESERVATION", 3, minimum=0)
# Share of a turn's cost charged in credits when it ran on the organization's
# own provider key (0: the organization pays the provider directly; 1: full price).
CREDITS_OWN_KEY_RATE = env_decimal("CREDITS_OWN_KEY_RATE", "0", minimum="0", maximum="1")

# --- Secrets and Redis ------------------------------------------------------
# Organizations' provider keys are sealed under this secret (providers/sealing.py);
# a product must set it (system check assistant_providers.E002).
ASSISTANT_KEYS_SECRET = env_str("ASSISTANT_KEYS_SECRET")
ASSISTANT_KEYS_SECRET_FALLBACKS = env_list("ASSISTANT_KEYS_SECRET_FALLBACKS", [])
# Live progress of turns through Redis pub/sub (assistant/live.py); empty: streams poll the database.
REDIS_URL = env_str("REDIS_URL")

# --- The assistant ---------------------------------------------------------
ASSISTANT_MODEL = env_str("ASSISTANT_MODEL", "")  # empty: the offline demo model
ASSISTANT_ALLOW_US_PROCESSING = env_bool("ASSISTANT_ALLOW_US_PROCESSING", False)
# Model options organizations may choose among (catalog ids, comma-separated);
# empty: every option usable here (keys and residency rules).
ASSISTANT_MODEL_OPTIONS = env_list("ASSISTANT_MODEL_OPTIONS", [])
INFOMANIAK_AI_TOKEN = env_str("INFOMANIAK_AI_TOKEN")
INFOMANIAK_AI_PRODUCT_ID = env_str("INFOMANIAK_AI_PRODUCT_ID")
INFOMANIAK_AI_BASE_URL = env_str("INFOMANIAK_AI_BASE_URL")
BEDROCK_REGION = env_str("BEDROCK_REGION")
BEDROCK_API_KEY = env_str("BEDROCK_API_KEY")
ANTHROPIC_API_KEY = env_str("ANTHROPIC_API_KEY")
# Where the toolsets of the host product are declared ("module.path.NAME").
ASSISTANT_TOOLSETS = env_list("ASSISTANT_TOOLSETS", [])
ASSISTANT_MAX_STEPS = env_int("ASSISTANT_MAX_STEPS", 25, minimum=1)
# Seconds POST /api/chat waits for the reply when the client states no preference
# (CHLOVA's client: `{reply, conversationId}` in the answer); 0: 202 at once.
ASSISTANT_CHAT_WAIT_SECONDS = env_int("ASSISTANT_CHAT_WAIT_SECONDS", 0, minimum=0)
# The form of GET /api/conversations when the client asks for no page (no `page`,
# `pageSize` nor `q`): "pages" ({count, next, previous, results}) or "chlova",
# CHLOVA's client's bare array of {id, title, createdAt, updatedAt}, most recent first.
ASSISTANT_CONVERSATIONS_LIST = env_str("ASSISTANT_CONVERSATIONS_LIST", "pages")
if ASSISTANT_CONVERSATIONS_LIST not in ("pages", "chlova"):
    raise ImproperlyConfigured("ASSISTANT_CONVERSATIONS_LIST must be 'pages' or 'chlova'.")
ASSISTANT_MAX_TOOL_CALLS_PER_STEP = env_int("ASSISTANT_MAX_TOOL_CALLS_PER_STEP", 25, minimum=1)
ASSISTANT_TURN_SECONDS = env_int("ASSISTANT_TURN_SECONDS", 8 * 60, minimum=1)
ASSISTANT_TOOL_RESULT_CHARS = env_int("ASSISTANT_TOOL_RESULT_CHARS", 20_000, minimum=100)
ASSISTANT_HISTORY_BYTES = env_int("ASSISTANT_HISTORY_BYTES", 700_000, minimum=1000)
# An organization's "window" choice (Organization.history_mode), and Telegram's
# under "full": the model gets the most recent messages that fit, at least this
# many while they fit the model's window.
HISTORY_WINDOW = env_int("HISTORY_WINDOW", 20, minimum=1)
# The most a reply may write (tokens); lowered to the model's own maximum.
ASSISTANT_MAX_OUTPUT_TOKENS = env_int("ASSISTANT_MAX_OUTPUT_TOKENS", 4096, minimum=1)
# A deployment's own bound on what one request may hold (tokens; 0: each model's
# whole window): a smaller window summarizes sooner and bounds what a step costs.
ASSISTANT_CONTEXT_WINDOW_TOKENS = env_int("ASSISTANT_CONTEXT_WINDOW_TOKENS", 0, minimum=0)
# The most a summary of earlier messages may write (tokens), and how many
# summary calls one turn may make to catch up with a long unsummarized past.
ASSISTANT_SUMMARY_MAX_TOKENS = env_int("ASSISTANT_SUMMARY_MAX_TOKENS", 2048, minimum=64)
ASSISTANT_SUMMARY_CALLS_PER_TURN = env_int("ASSISTANT_SUMMARY_CALLS_PER_TURN", 6, minimum=1)
# The most one turn may cost (credits), whatever the balance: the loop stops
# before a model call whose upper bound would take the turn past it.
ASSISTANT_TURN_MAX_CREDITS = env_int("ASSISTANT_TURN_MAX_CREDITS", 1000, minimum=1)
# Delay between the offline model's text chunks, so streaming is visible.
OFFLINE_MODEL_CHUNK_DELAY_MS = env_int("OFFLINE_MODEL_CHUNK_DELAY_MS", 40)

# --- Maintenance jobs (Celery beat, config/celery.py) ----------------------
# A running turn is stuck (its worker is gone) once it is this long past
# ASSISTANT_TURN_SECONDS: above the task's hard time limit (the bound + 60 s).
ASSISTANT_STUCK_GRACE_SECONDS = env_int("ASSISTANT_STUCK_GRACE_SECONDS", 90, minimum=0)
# A turn still queued after this long is published again, once; still queued
# this long after that, it fails with its reservation released.
ASSISTANT_QUEUED_SWEEP_SECONDS = env_int("ASSISTANT_QUEUED_SWEEP_SECONDS", 300, minimum=10)
# Each Celery worker process writes a heartbeat this often (assistant.service);
# a turn still queued after SERVICE_DOWN_SECONDS while no worker beats is
# reported as the service not answering (the turn's status, the chat page).
WORKER_BEAT_SECONDS = env_int("WORKER_BEAT_SECONDS", 5, minimum=1)
SERVICE_DOWN_SECONDS = env_int("SERVICE_DOWN_SECONDS", 15, minimum=1)
# Conversations without activity for this many days are deleted.
ASSISTANT_IDLE_PURGE_DAYS = env_int("ASSISTANT_IDLE_PURGE_DAYS", 90, minimum=1)
ASSISTANT_PURGE_BATCH_SIZE = env_int("ASSISTANT_PURGE_BATCH_SIZE", 200, minimum=1)
# Rows deleted per batch of a person's erasure; the wait before trying again
# while one of their conversations is being answered; and the age at which a
# running erasure without progress is enqueued again by continue_erasures.
ASSISTANT_ERASURE_BATCH_SIZE = env_int("ASSISTANT_ERASURE_BATCH_SIZE", 500, minimum=1)
ASSISTANT_ERASURE_RETRY_SECONDS = env_int("ASSISTANT_ERASURE_RETRY_SECONDS", 30, minimum=1)
ASSISTANT_ERASURE_STALL_SECONDS = env_int("ASSISTANT_ERASURE_STALL_SECONDS", 120, minimum=10)
# Rows of the staff access log older than this many days are deleted.
STAFF_ACCESS_RETENTION_DAYS = env_int("STAFF_ACCESS_RETENTION_DAYS", 730, minimum=1)

# --- Cards and the trifecta guard ---------------------------------------------
# "warn": a send card proposed after a turn read private data and untrusted
# content carries a warning; "block": such a send is refused for that turn.
ASSISTANT_TRIFECTA = env_str("ASSISTANT_TRIFECTA", "warn")
if ASSISTANT_TRIFECTA not in ("warn", "block"):
    raise ImproperlyConfigured("ASSISTANT_TRIFECTA must be 'warn' or 'block'.")
# How long what a person's MCP clients read taints their sends, whichever
# session or web process serves them (surfaces/mcp/record.py).
MCP_TAINT_HOURS = env_int("MCP_TAINT_HOURS", 24, minimum=1)
# /mcp takes MCP-only tokens (the tokens page's "for an MCP client only"): a token
# an MCP client holds can neither start a turn nor confirm a card on the API.
# On for a while after an upgrade, it lets existing clients' API tokens in too.
MCP_ACCEPTS_API_TOKENS = env_bool("MCP_ACCEPTS_API_TOKENS", False)
ASSISTANT_CARD_LIFETIME_SECONDS = env_int("ASSISTANT_CARD_LIFETIME_SECONDS", 24 * 3600, minimum=60)
# A confirmed card with no recorded outcome this long after the click was cut
# short (its process died): it becomes `outcome_unknown`, never retried. Above
# any request timeout, so an action still running is not declared lost.
ASSISTANT_CARD_OUTCOME_TIMEOUT_SECONDS = env_int("ASSISTANT_CARD_OUTCOME_TIMEOUT_SECONDS", 900, minimum=60)


# --- Telegram (surfaces/telegram/) -------------------------------------------
# The surface is off (the webhook answers 404) while the token is empty.
TELEGRAM_BOT_TOKEN = env_str("TELEGRAM_BOT_TOKEN")
# Telegram sends it in X-Telegram-Bot-Api-Secret-Token; required with a token.
TELEGRAM_WEBHOOK_SECRET = env_str("TELEGRAM_WEBHOOK_SECRET")
if TELEGRAM_BOT_TOKEN and not re.fullmatch(r"[A-Za-z0-9_-]{16,256}", TELEGRAM_WEBHOOK_SECRET):
    # What setWebhook accepts as secret_token, and long enough not to be guessed.
    raise ImproperlyConfigured("TELEGRAM_WEBHOOK_SECRET must be 16-256 characters of A-Z a-z 0-9 _ - "
                               "when TELEGRAM_BOT_TOKEN is set.")
# The bot's methods are at {base}/bot{token}/{method} (a proxy, or a fake in tests).
TELEGRAM_API_BASE_URL = env_str("TELEGRAM_API_BASE_URL", "https://api.telegram.org").rstrip("/")
# The bot's @username, for the deep link https://t.me/<bot>?start=<code>.
TELEGRAM_BOT_USERNAME = env_str("TELEGRAM_BOT_USERNAME")
# Minutes a linking code stays valid.
TELEGRAM_LINK_CODE_MINUTES = env_int("TELEGRAM_LINK_CODE_MINUTES", 10, minimum=1)
# Milliseconds between two edits of a streamed reply (Telegram allows about one a second per chat).
TELEGRAM_EDIT_INTERVAL_MS = env_int("TELEGRAM_EDIT_INTERVAL_MS", 1000, minimum=100)

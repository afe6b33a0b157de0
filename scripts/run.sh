#!/usr/bin/env bash
# `make run`: migrate, create the demo organization and login once, then serve
# the app with a Celery worker and beat beside it (open http://127.0.0.1:8000/notes/:
# the demo product with the assistant panel; the chat page is at /), on
# the embedded defaults (SQLite, a broker that needs no server, the offline
# model unless a provider is configured).
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBUG="${DEBUG:-1}"
PY=.venv/bin/python
mkdir -p .run

where="SQLite, db.sqlite3"; [ -z "${DATABASE_URL:-}" ] || where=DATABASE_URL  # not the URL: it may hold a password
echo "== Migrating the database ($where)"
$PY manage.py migrate --noinput >/dev/null
$PY manage.py setup_demo

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM

# Turns run as threads (as in production, scripts/serve.sh); SQLite takes one
# writer at a time, so fewer of them than on PostgreSQL.
.venv/bin/celery -A config worker --beat --loglevel=WARNING --pool=threads --concurrency=20 \
  --schedule=.run/celerybeat-schedule >.run/worker.log 2>&1 &
pids+=($!)
echo "Celery worker and beat started (log: .run/worker.log)."
$PY manage.py runserver "127.0.0.1:${PORT:-8000}"

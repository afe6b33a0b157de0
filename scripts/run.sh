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
.venv/bin/celery -A config worker --loglevel=WARNING --pool=threads --concurrency=20 >.run/worker.log 2>&1 &
worker=$!
pids+=("$worker")
# The beat in a process of its own that goes down with the worker: an embedded
# beat (--beat) outlives a worker that crashed, and keeps queueing jobs nobody runs.
.venv/bin/celery -A config beat --loglevel=WARNING --schedule=.run/celerybeat-schedule >.run/beat.log 2>&1 &
beat=$!
pids+=("$beat")
( while kill -0 "$worker" 2>/dev/null; do sleep 1; done; kill "$beat" 2>/dev/null ) &
pids+=($!)
echo "Celery worker and beat started (logs: .run/worker.log, .run/beat.log)."
# An ASGI server (as in production), so that /mcp answers too; it reloads on a code change as runserver did.
port="${PORT:-8000}"
echo "The MCP server: http://127.0.0.1:$port/mcp (a token from http://127.0.0.1:$port/tokens/)"
reload_dirs=()
for dir in config assistant assistant_engine conversations credits workspace; do reload_dirs+=(--reload-dir "$dir"); done
.venv/bin/uvicorn config.asgi:application --host 127.0.0.1 --port "$port" --reload "${reload_dirs[@]}" \
  --log-level warning

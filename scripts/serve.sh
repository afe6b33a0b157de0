#!/usr/bin/env bash
# Production processes, one kind per call (see docs/deploy.md):
#   scripts/serve.sh web      the ASGI app: gunicorn + uvicorn workers on $HOST:$PORT
#   scripts/serve.sh worker   a Celery worker (turns and maintenance jobs)
#   scripts/serve.sh beat     Celery beat: exactly ONE per deployment
#   scripts/serve.sh release  migrate + collectstatic (once per deploy, before the others)
#   scripts/serve.sh all      release, then web + worker + beat on one machine (`make serve`)
# Needs DATABASE_URL, REDIS_URL, SECRET_KEY, ASSISTANT_KEYS_SECRET and EMAIL_BACKEND (and a model: ASSISTANT_MODEL or
# Infomaniak's credentials; ASSISTANT_MODEL=offline names the demo model).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PY=$VENV/bin/python
export DJANGO_SETTINGS_MODULE=${DJANGO_SETTINGS_MODULE:-config.settings}
export HOST=${HOST:-127.0.0.1} PORT=${PORT:-8000}
# The web process: Django's persistent connections belong to one thread, and
# ASGI runs sync code in short-lived threads, so the web does not keep them.
WEB_DB_CONN_MAX_AGE=${WEB_DB_CONN_MAX_AGE:-0}

web() {
  # gunicorn supervises the processes (restarts a dead one, graceful reloads on
  # HUP); uvicorn's worker runs the ASGI app on uvloop. WEB_CONCURRENCY
  # processes (gunicorn reads it); each holds any number of open streams.
  # Access lines (uvicorn's format) carry method, path with ids, status: no text.
  # No control socket: its one default path (~/.gunicorn) is shared by every
  # gunicorn of the machine (a test run beside a deployment would take it over).
  exec env DATABASE_CONN_MAX_AGE="$WEB_DB_CONN_MAX_AGE" "$VENV/bin/gunicorn" config.asgi:application \
    --worker-class uvicorn_worker.UvicornWorker \
    --workers "${WEB_CONCURRENCY:-2}" \
    --bind "$HOST:$PORT" \
    --graceful-timeout "${WEB_GRACEFUL_TIMEOUT:-10}" \
    --keep-alive 5 \
    --no-control-socket \
    --access-logfile - \
    ${WEB_OPTIONS:-}
}

worker() {
  # WORKER_CONCURRENCY turns at once in ONE process, a thread each (Celery's
  # threads pool): a turn spends its time waiting on the model's HTTP stream,
  # which a thread does as well as a process for a fraction of the memory.
  # While it waits it holds no database connection (the PostgreSQL pool of
  # DATABASE_POOL_SIZE connections is shared by the process's threads).
  exec "$VENV/bin/celery" -A config worker --loglevel="${LOG_LEVEL:-INFO}" --pool="${WORKER_POOL:-threads}" \
    --concurrency="${WORKER_CONCURRENCY:-200}" --hostname="${WORKER_NAME:-worker}@%h" --without-gossip ${WORKER_OPTIONS:-}
}

beat() {
  mkdir -p "${RUN_DIR:-.run}"
  exec "$VENV/bin/celery" -A config beat --loglevel="${LOG_LEVEL:-INFO}" \
    --schedule="${RUN_DIR:-.run}/celerybeat-schedule"
}

release() {
  $PY manage.py migrate --noinput
  $PY manage.py collectstatic --noinput >/dev/null
}

all() {
  release
  local pids=()
  stop() { trap - EXIT INT TERM; kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
  trap stop EXIT INT TERM
  "$0" worker & pids+=($!)
  "$0" beat & pids+=($!)
  "$0" web & pids+=($!)
  # One process gone means the deployment is broken: stop the others too.
  wait -n "${pids[@]}"
}

case "${1:-}" in
  web|worker|beat|release|all) "$1" ;;
  *) echo "usage: $0 web|worker|beat|release|all" >&2; exit 2 ;;
esac

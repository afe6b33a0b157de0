#!/usr/bin/env bash
# `make loadtest`: the production stack (1 web process, 2 worker processes) on a
# PostgreSQL and a Redis started here, the offline model at 40 ms a chunk, and
# two bounded locust runs on 127.0.0.1 only:
#   1. chat: LOADTEST_CHAT_USERS people send a message and follow its stream, for LOADTEST_CHAT_SECONDS;
#   2. streams at rest: LOADTEST_STREAMS streams held open on turns waiting on their model;
#      measured: the web process's memory per stream and database queries per second.
# Appends a table to bench/README.md (bench/loadtest_report.py). Stops by itself;
# everything it starts is stopped on exit. Not part of `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
CHAT_USERS=${LOADTEST_CHAT_USERS:-12}
CHAT_SECONDS=${LOADTEST_CHAT_SECONDS:-60}
STREAMS=${LOADTEST_STREAMS:-1000}
HELD_TURNS=${LOADTEST_HELD_TURNS:-50}

[ -x .venv/bin/locust ] || .venv/bin/pip install --quiet -e '.[loadtest]'
command -v redis-server >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; }
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

OUT=$(mktemp -d /tmp/assistant-loadtest.XXXXXX)
chmod 755 "$OUT"  # the postgres user reaches its data folder inside
free_port() { $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  scripts/pg.sh stop "$OUT/pg"
  echo "logs and CSVs: $OUT"
}
trap cleanup EXIT

echo "== PostgreSQL and Redis"
PG_PORT=$(free_port)
DATABASE_URL=$(scripts/pg.sh start "$OUT/pg" "$PG_PORT")
ADMIN_URL="postgres://postgres@127.0.0.1:$PG_PORT/postgres"
$PY -c "import psycopg, sys; psycopg.connect(sys.argv[1], autocommit=True).execute('CREATE DATABASE assistant')" "$ADMIN_URL"
REDIS_PORT=$(free_port)
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --maxclients 20000 \
  >"$OUT/redis.log" 2>&1 &
pids+=($!)

export DJANGO_SETTINGS_MODULE=config.settings DEBUG=0 SECRET_KEY=loadtest-only-secret
export ASSISTANT_KEYS_SECRET=loadtest-only-keys-secret EMAIL_BACKEND=django.core.mail.backends.locmem.EmailBackend
export DATABASE_URL REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0" ASSISTANT_MODEL=offline
export HOST=127.0.0.1 PORT=$(free_port) ALLOWED_HOSTS=127.0.0.1 WEB_CONCURRENCY=1 WORKER_CONCURRENCY=2
export RUN_DIR="$OUT/run" STATIC_ROOT="$OUT/static" OFFLINE_MODEL_CHUNK_DELAY_MS=40 LOG_LEVEL=WARNING
mkdir -p "$RUN_DIR"

echo "== release and seed"
scripts/serve.sh release >"$OUT/release.log" 2>&1
SEED=$($PY bench/loadtest_seed.py "$HELD_TURNS")
export LOADTEST_TOKEN=$($PY -c 'import json,sys; print(json.loads(sys.argv[1])["token"])' "$SEED")
export LOADTEST_HELD_TURNS=$($PY -c 'import json,sys; print(",".join(json.loads(sys.argv[1])["held"]))' "$SEED")

echo "== the stack: 1 web process, 2 worker processes"
scripts/serve.sh worker >"$OUT/worker.log" 2>&1 &
pids+=($!)
WEB_OPTIONS="--access-logfile /dev/null" scripts/serve.sh web >"$OUT/web.log" 2>&1 &
WEB=$!
pids+=($WEB)
for _ in $(seq 300); do
  grep -q "ready" "$OUT/worker.log" 2>/dev/null && $PY -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1)" "$PORT" 2>/dev/null && break
  sleep 0.2
done
WEB_PROCESS=$(pgrep -P "$WEB" | head -n 1)  # gunicorn's one uvicorn worker
LOCUST=(.venv/bin/locust -f bench/locustfile.py --headless --host "http://127.0.0.1:$PORT" --only-summary --stop-timeout 10)

echo "== 1. chat: $CHAT_USERS people for ${CHAT_SECONDS}s"
CHAT_STATUS=0
"${LOCUST[@]}" ChatUser -u "$CHAT_USERS" -r "$CHAT_USERS" -t "${CHAT_SECONDS}s" --csv "$OUT/chat" \
  >"$OUT/chat.log" 2>&1 || CHAT_STATUS=$?

echo "== 2. $STREAMS streams at rest"
sleep 2
RSS_BEFORE=$($PY bench/loadtest_probe.py rss "$WEB_PROCESS")
HOLD_STATUS=0
"${LOCUST[@]}" StreamHolder -u "$STREAMS" -r 100 -t 90s --csv "$OUT/hold" >"$OUT/hold.log" 2>&1 &
HOLD=$!
OPEN=$($PY bench/loadtest_probe.py wait-streams "$PORT" "$STREAMS" 60)
AT_REST=$($PY bench/loadtest_probe.py at-rest "$ADMIN_URL" "$OUT/pg/server.log" 15)
RSS_OPEN=$($PY bench/loadtest_probe.py rss "$WEB_PROCESS")  # once every stream is served and waiting
$PY bench/loadtest_seed.py finish "$LOADTEST_HELD_TURNS" >/dev/null
wait "$HOLD" || HOLD_STATUS=$?

cat >"$OUT/metrics.json" <<JSON
{"chat_users": $CHAT_USERS, "chat_seconds": $CHAT_SECONDS, "streams_wanted": $STREAMS, "streams_open": $OPEN,
 "rss_before_kib": $RSS_BEFORE, "rss_open_kib": $RSS_OPEN, "at_rest": $AT_REST,
 "chat_exit": $CHAT_STATUS, "hold_exit": $HOLD_STATUS}
JSON
$PY bench/loadtest_report.py "$OUT" | tee -a bench/README.md

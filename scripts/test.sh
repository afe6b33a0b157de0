#!/usr/bin/env bash
# `make test`: install what the suite needs (Debian's PostgreSQL, Redis and
# Chromium when missing), run the checks, then the whole suite on SQLite and
# again on a real PostgreSQL server that this script starts and stops.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python

ensure_debian_packages() {
  local missing=()
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  # msgfmt and xgettext: the test that the committed catalogs are complete and compiled.
  command -v msgfmt >/dev/null 2>&1 || missing+=(gettext)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "Installing Debian packages: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

ensure_debian_packages
mkdir -p .run

echo "== ruff"
.venv/bin/ruff check .
echo "== import-linter: the layout of DESIGN.md (contracts in pyproject.toml)"
.venv/bin/lint-imports --no-cache
echo "== manage.py check, makemigrations --check"
# Outside DEBUG the settings refuse to start without these (README, Configuration).
CI_ENV=(SECRET_KEY=ci-check ASSISTANT_KEYS_SECRET=ci-check EMAIL_BACKEND=django.core.mail.backends.locmem.EmailBackend)
env "${CI_ENV[@]}" $PY manage.py check --fail-level WARNING
env "${CI_ENV[@]}" $PY manage.py makemigrations --check --dry-run >/dev/null
echo "== manage.py check --deploy with the production settings of the README"
scripts/deploy_check.sh

echo "== pytest on SQLite (the schemathesis run comes with PostgreSQL, once)"
$PY -m pytest -q -m "not schemathesis" "$@"

PG_DIR=$(mktemp -d /tmp/assistant-pg.XXXXXX)
trap 'scripts/pg.sh stop "$PG_DIR"' EXIT
PG_PORT=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
DATABASE_URL=$(scripts/pg.sh start "$PG_DIR" "$PG_PORT")
echo "== pytest on PostgreSQL ($DATABASE_URL), with schemathesis against a real server (about 4 minutes)"
# The benches' smoke runs make their own databases: once is enough (tests/benchmarks/).
DATABASE_URL=$DATABASE_URL $PY -m pytest -q -m "not browser and not bench" "$@"

#!/usr/bin/env bash
# manage.py in `make run`'s environment: DEBUG on unless the environment says
# otherwise, hence the development defaults (the SQLite database db.sqlite3 in
# this checkout unless DATABASE_URL is set, a development SECRET_KEY, the broker
# folder under .run/). The README's operator commands use it against the demo;
# on a deployment run `.venv/bin/python manage.py …` with the deployment's
# environment (docs/production.env) instead.
set -euo pipefail
cd "$(dirname "$0")/.."
# A server database (DATABASE_URL not SQLite) is a deployment's: its environment governs,
# never make run's development defaults (a key sealed under the public development secret).
case "${DATABASE_URL:-}" in ""|sqlite:*) development=1 ;; *) development=0 ;; esac
if [ -z "${DEBUG:-}" ] && [ "$development" = 1 ]; then  # unset or empty, as in scripts/run.sh
  export DEBUG=1
  # On stderr, so that a command whose output is its answer (create_token) stays clean.
  where=db.sqlite3; [ -z "${DATABASE_URL:-}" ] || where=DATABASE_URL  # never the URL itself: it may hold a password
  echo "scripts/manage.sh: make run's environment (DEBUG=1, the database in $where)" >&2
fi
exec .venv/bin/python manage.py "$@"

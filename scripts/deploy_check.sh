#!/usr/bin/env bash
# `manage.py check --deploy` with the production settings of the README
# (docs/production.env, fresh random secrets in place of the placeholders): it
# must pass with no warning. CI runs it (scripts/test.sh).
# Usage: scripts/deploy_check.sh [ENV_FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
ENV_FILE=${1:-docs/production.env}
random_secret() { $PY -c 'import secrets; print(secrets.token_urlsafe(50))'; }

settings=()
while IFS= read -r line; do
  case "$line" in ''|'#'*) continue ;; esac
  case "$line" in SECRET_KEY=*|ASSISTANT_KEYS_SECRET=*) line="${line%%=*}=$(random_secret)" ;; esac
  settings+=("$line")
done <"$ENV_FILE"

RUN_DIR=$(mktemp -d /tmp/deploy-check.XXXXXX)
trap 'rm -rf "$RUN_DIR"' EXIT
# Nothing else from this shell: the check sees the production settings only.
env -i PATH="$PATH" HOME="${HOME:-/tmp}" DJANGO_SETTINGS_MODULE=config.settings \
  RUN_DIR="$RUN_DIR" DATABASE_URL="sqlite:///$RUN_DIR/db.sqlite3" "${settings[@]}" \
  $PY manage.py check --deploy --fail-level WARNING

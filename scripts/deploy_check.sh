#!/usr/bin/env bash
# `manage.py check --deploy` with the production settings documented in the
# README ("Production settings"): it must pass with no warning. CI runs it
# (scripts/test.sh); tests/config/test_startup_settings.py runs it too.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
# Throw-away secrets of production's length and variety; real ones come from the environment.
random_secret() { $PY -c 'import secrets; print(secrets.token_urlsafe(50))'; }
env -i PATH="$PATH" HOME="${HOME:-/tmp}" \
  DJANGO_SETTINGS_MODULE=config.settings \
  DEBUG=0 \
  SECRET_KEY="$(random_secret)" \
  ASSISTANT_KEYS_SECRET="$(random_secret)" \
  ALLOWED_HOSTS=assistant.example.com \
  CSRF_TRUSTED_ORIGINS=https://assistant.example.com \
  EMAIL_BACKEND=django.core.mail.backends.smtp.EmailBackend \
  EMAIL_HOST=smtp.example.com EMAIL_PORT=587 EMAIL_USE_TLS=1 \
  SECURE_PROXY_SSL=1 \
  SECURE_SSL_REDIRECT=1 \
  SECURE_HSTS_SECONDS=31536000 \
  SECURE_HSTS_INCLUDE_SUBDOMAINS=1 \
  SECURE_HSTS_PRELOAD=1 \
  DATABASE_URL="${DEPLOY_CHECK_DATABASE_URL:-sqlite:///$(mktemp -u /tmp/deploy-check.XXXXXX).sqlite3}" \
  RUN_DIR="$(mktemp -d /tmp/deploy-check-run.XXXXXX)" \
  $PY manage.py check --deploy --fail-level WARNING

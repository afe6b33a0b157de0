# The two set-up commands: `make run` and `make test` (see README.md).
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
# The app's packages (`make run`, `make serve`), then the test tools on top (`make test` and the benches).
APP_STAMP := $(VENV)/.installed-app
STAMP := $(VENV)/.installed
PIP := $(PY) -m pip install --disable-pip-version-check --progress-bar off
# pip's warnings (a build backend's notices) go here, shown only when the install fails.
PIP_LOG := $(VENV)/pip-install.log

.PHONY: run serve test messages bench bench-compare bench-injection bench-reservation bench-render bench-first-word bench-scale bench-turns bench-profile \
	loadtest lint clean

$(APP_STAMP): pyproject.toml
	@test -x $(PY) || { echo "== Creating the virtualenv $(VENV)"; $(PYTHON) -m venv $(VENV); }
	@echo "== Installing the app's packages into $(VENV) (the first time: a minute or two)"
	@$(PIP) --upgrade pip 2>$(PIP_LOG) | grep -E '^(Collecting|Successfully)' || true
	@$(PIP) -e . 2>$(PIP_LOG) | grep -E '^(Collecting|Successfully)' ; \
	  test $${PIPESTATUS[0]} -eq 0 || { cat $(PIP_LOG); exit 1; }
	@touch $(APP_STAMP)

$(STAMP): $(APP_STAMP)
	@echo "== Installing the test tools into $(VENV)"
	@$(PIP) -e '.[dev]' 2>$(PIP_LOG) | grep -E '^(Collecting|Successfully)' ; \
	  test $${PIPESTATUS[0]} -eq 0 || { cat $(PIP_LOG); exit 1; }
	@touch $(STAMP)

# PORT (default 8000) is where the development server listens.
run: $(APP_STAMP)
	scripts/run.sh

# Production processes on one machine (web, worker, beat): needs DATABASE_URL,
# REDIS_URL, SECRET_KEY and a model (docs/deploy.md). HOST/PORT default 127.0.0.1:8000.
serve: $(APP_STAMP)
	scripts/serve.sh all

test: $(STAMP)
	scripts/test.sh

# The translation catalogs (assistant_engine/web/locale/): new strings added to the .po files, then compiled (needs gettext).
MESSAGES_IGNORE = -i .venv -i .run -i staticfiles -i tests -i bench -i docs -i scripts -i locale -i vendor -i examples
messages: $(STAMP)
	DEBUG=1 SECRET_KEY=messages $(PY) manage.py makemessages -a --no-location $(MESSAGES_IGNORE)
	DEBUG=1 SECRET_KEY=messages $(PY) manage.py makemessages -d djangojs -a --no-location $(MESSAGES_IGNORE)
	DEBUG=1 SECRET_KEY=messages $(PY) manage.py compilemessages --ignore .venv

bench: $(STAMP)
	$(PY) bench/run.py $(if $(WRITE),--write)
	$(PY) bench/upsert.py
	$(PY) bench/long_conversations.py $(if $(WRITE),--write)

# The peer of the side-by-side comparison, pinned, in its own virtualenv.
PEER_VENV = .run/peer-venv
PEER_PACKAGES = django-ai-assistant==0.4.0 Django==5.2.19 langchain==1.5.2 langchain-core==1.8.3 \
	langgraph==1.2.24 django-ninja==1.7.1

$(PEER_VENV)/.installed:
	test -x $(PEER_VENV)/bin/python || $(PYTHON) -m venv $(PEER_VENV)
	$(PEER_VENV)/bin/pip install --quiet $(PEER_PACKAGES)
	touch $@

bench-compare: $(STAMP) $(PEER_VENV)/.installed
	$(PY) bench/compare.py --write

# Every channel × injection goal × guard mode × wire format, with a model that obeys every injection; appends to bench/README.md.
bench-injection: $(STAMP)
	$(PY) bench/injection.py --write

bench-reservation: $(STAMP)
	$(PY) bench/reservation.py

# What coloured code and typeset maths cost, on the server and in Chromium; appends to bench/README.md.
bench-render: $(STAMP)
	$(PY) bench/render.py --write

# From POST /api/chat to the first text event, on make run's and make serve's stacks; appends to bench/README.md.
bench-first-word: $(STAMP)
	$(PY) bench/first_word.py --write
# Cost flat with the deployment's size: two sizes of one deployment on PostgreSQL (bench/scale.py);
# appends its tables to bench/README.md. Not part of `make test`.
bench-scale: $(STAMP)
	$(PY) bench/scale.py --write
# 200 turns at once (an 8-second fake model) on ONE worker process of scripts/serve.sh's defaults, on a
# PostgreSQL and a Redis started here; appends to bench/README.md. Not part of `make test`.
bench-turns: $(STAMP)
	$(PY) bench/turns.py --spread 2 --write

# Where the CPU of 200 turns at once goes (a 2-second fake model, bench-turns' stack): py-spy on the worker and
# the web, top-ten tables by own and inclusive time; WRITE=1 appends them to bench/README.md. Not part of `make test`.
BENCH_PROFILE_ARGS ?=
bench-profile: $(STAMP)
	$(PY) bench/turns_profile.py $(if $(WRITE),--write) $(BENCH_PROFILE_ARGS)

# A bounded load test of the production stack (not part of `make test`); appends to bench/README.md.
loadtest: $(STAMP)
	bench/loadtest.sh

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-cache

clean:
	rm -rf $(VENV) .run staticfiles

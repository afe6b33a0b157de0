# The two set-up commands: `make run` and `make test` (see README.md).
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run serve test bench bench-reservation loadtest lint clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	scripts/run.sh

# Production processes on one machine (web, worker, beat): needs DATABASE_URL,
# REDIS_URL, SECRET_KEY and a model (docs/deploy.md). HOST/PORT default 127.0.0.1:8000.
serve: $(STAMP)
	scripts/serve.sh all

test: $(STAMP)
	scripts/test.sh

bench: $(STAMP)
	$(PY) bench/run.py
	$(PY) bench/upsert.py

bench-reservation: $(STAMP)
	$(PY) bench/reservation.py

# A bounded load test of the production stack (not part of `make test`); appends to bench/README.md.
loadtest: $(STAMP)
	bench/loadtest.sh

lint: $(STAMP)
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) .run staticfiles

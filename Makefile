# The two set-up commands: `make run` and `make test` (see README.md).
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test bench bench-reservation lint clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	scripts/run.sh

test: $(STAMP)
	scripts/test.sh

bench: $(STAMP)
	$(PY) bench/run.py
	$(PY) bench/upsert.py

bench-reservation: $(STAMP)
	$(PY) bench/reservation.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) .run staticfiles

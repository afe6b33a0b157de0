# The two set-up commands: `make run` and `make test` (see README.md).
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test bench bench-compare bench-reservation lint clean

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
	$(PY) bench/run.py $(if $(WRITE),--write)

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

bench-reservation: $(STAMP)
	$(PY) bench/reservation.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) .run staticfiles

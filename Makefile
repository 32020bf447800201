# Agents UI: `make run` serves the product, `make test` runs every test. Both set themselves up.
SHELL := /bin/bash
HOST ?= 127.0.0.1
PORT ?= 8000
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.requirements-installed
# requirements/*.in say what the product needs and why; the locks (*.txt, every file's hash) are
# compiled from them by `make lock`: runtime.txt (a deployment), demo.txt (+ the demo A2A agent's
# server), dev.txt (+ tests and tooling: what this Makefile installs).
LOCKS := requirements/runtime.txt requirements/demo.txt requirements/dev.txt
UV := $(VENV)/bin/uv
export DEBUG ?= true
export AGENTS_UI_PUBLIC_URL ?= http://$(HOST):$(PORT)

.PHONY: run test test-unit test-e2e bench reliability setup lint format lock clean conformance

# The first Python 3.12+ on PATH (pyenv's shim honours .python-version).
$(PY):
	@for candidate in python3 python3.13 python3.12 python3.14 python; do \
	  if command -v $$candidate >/dev/null 2>&1 && $$candidate -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then \
	    echo "Creating $(VENV) with $$($$candidate --version)"; $$candidate -m venv $(VENV) && exit 0; \
	  fi; \
	done; echo "Python 3.12 or newer is needed: install it and run make again." >&2; exit 1

# A changed lock reinstalls. Every file pip installs must match a hash in the lock (pip itself too:
# the lock pins it), whichever index or local folder (PIP_FIND_LINKS) it comes from.
$(STAMP): $(LOCKS) | $(PY)
	$(PY) -m pip install --quiet --require-hashes -r requirements/dev.txt
	@touch $(STAMP)

setup: $(STAMP)
	$(PY) manage.py migrate --no-input -v 0

run: export AGENTS_UI_DEMO_AGENTS ?= true
run: setup
	$(PY) manage.py ensure_admin
	$(PY) manage.py setup_demo_agents
	@echo "Agents UI on http://$(HOST):$(PORT)/  (admin: http://$(HOST):$(PORT)/admin/)"
	$(PY) manage.py serve --host $(HOST) --port $(PORT)

# Browser tests run in their own pytest process: Playwright's sync API and asyncio tests do not mix.
test: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/pytest
	AGENTS_UI_E2E=1 DJANGO_ALLOW_ASYNC_UNSAFE=true $(VENV)/bin/pytest tests/e2e

test-unit: setup
	$(VENV)/bin/pytest

test-e2e: setup
	AGENTS_UI_E2E=1 DJANGO_ALLOW_ASYNC_UNSAFE=true $(VENV)/bin/pytest tests/e2e

# Real AG-UI servers built with each framework's own adapter (tests/interop), each in its own
# environment under .interop/ (created once, then reused), run through the product's SDK, then
# through the product in the browser; the browser run writes the compatibility table docs/interop.md.
.PHONY: interop
interop: setup
	bash scripts/interop_setup.sh
	AGENTS_UI_INTEROP=1 $(VENV)/bin/pytest tests/interop
	AGENTS_UI_INTEROP=1 AGENTS_UI_E2E=1 DJANGO_ALLOW_ASYNC_UNSAFE=true \
		$(PY) -m pytest -p tests.interop.report tests/e2e/test_interop.py tests/e2e/test_interop_agno.py

# The AG-UI conformance corpus (tests/conformance/agui/): every fixture replayed over HTTP into the
# SDK, then a table by area. `make test` runs the same tests (without the table).
conformance: setup
	$(PY) -m pytest -p tests.conformance.agui.report tests/conformance -q

bench: setup
	$(PY) -m benchmarks

# Faults survived, bad input refused, 200 conversations for 2 minutes (1 worker on SQLite, then
# 2 workers on a throwaway PostgreSQL, installed with apt-get when missing), and lost messages: 0.
reliability: setup
	$(PY) scripts/reliability.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# Compiles the locks from requirements/*.in, for every platform and Python 3.12+: each keeps the
# versions it already pins unless its .in asks otherwise (`make lock UPGRADE=--upgrade` moves all to
# the newest). In order, as each .in is constrained by the lock before it.
lock: $(STAMP)
	for name in runtime demo dev; do \
	  $(UV) pip compile --quiet --universal --python-version 3.12 --generate-hashes $(UPGRADE) \
	    --custom-compile-command "make lock" requirements/$$name.in -o requirements/$$name.txt || exit 1; \
	done

clean:
	rm -rf $(VENV) staticfiles .test-db-*

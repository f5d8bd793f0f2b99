# Two commands do all the set-up on a fresh machine with Python 3.11+ and make:
#   make run   – serve Uptimy on http://127.0.0.1:8000 (PORT to change it)
#   make test  – lint and run the whole suite
#   make docs  – serve the documentation site (docs/, mkdocs.yml) on http://127.0.0.1:8001 (DOCS_PORT)
# With DATABASE_URL and REDIS_URL set, both use PostgreSQL and Redis instead of SQLite.
# Both install from the hashed lock files in requirements/; `make lock` refreshes them after
# a change to pyproject.toml's dependencies.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
DOCS_PORT ?= 8001

.PHONY: run test lint docs schema format bench bench-types lock clean

RUN_LOCK := requirements/run.txt
DEV_LOCK := requirements/dev.txt
# The locks are for the runtime every machine and the image have: CPython 3.11 on x86-64 Linux.
UV_COMPILE := $(BIN)/uv pip compile pyproject.toml --quiet --generate-hashes --python-version 3.11 \
	--python-platform x86_64-unknown-linux-gnu --custom-compile-command "make lock"

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Uptimy needs Python 3.11 or newer (set PYTHON=python3.x)")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Stamps reinstall only when a lock file (or the package's own metadata) changes. Every
# dependency comes pinned and hash-checked from a lock; the project itself is installed
# editable without resolving anything more.
$(VENV)/.run-deps: $(RUN_LOCK) pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --require-hashes -r $(RUN_LOCK)
	$(BIN)/python -m pip install --quiet --no-deps -e .
	@touch $@

# The run lock is compiled inside the dev lock's pins, so it is a subset of the dev lock and the
# dev install also satisfies `make run`.
$(VENV)/.dev-deps: $(DEV_LOCK) $(RUN_LOCK) pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --require-hashes -r $(DEV_LOCK)
	$(BIN)/python -m pip install --quiet --no-deps -e .
	@touch $@ $(VENV)/.run-deps

$(BIN)/uv: | $(BIN)/python
	$(BIN)/python -m pip install --quiet "uv>=0.5"

# Recompile both locks from pyproject.toml, keeping every pin that still fits;
# `make lock LOCK_ARGS=--upgrade` moves every pin to the newest release allowed.
lock: | $(BIN)/uv
	@mkdir -p requirements
	$(UV_COMPILE) $(LOCK_ARGS) --extra dev -o $(DEV_LOCK)
	$(UV_COMPILE) $(LOCK_ARGS) --constraint $(DEV_LOCK) -o $(RUN_LOCK)

# DEBUG stays off unless the environment asks (DEBUG=1 make run); without SECRET_KEY and
# UPTIMY_SECRETS_KEY the first start generates them into var/secrets.env (uptimy/local_secrets.py).
run: $(VENV)/.run-deps
	PORT=$(PORT) $(BIN)/python manage.py serve

# mypy's Django plugin imports the settings, which want their secrets; lint needs no real ones.
lint: $(VENV)/.dev-deps
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	SECRET_KEY=lint-only UPTIMY_SECRETS_KEY=lint-only $(BIN)/mypy
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir var/site

# The OpenAPI schema the REST API page renders, committed as docs/openapi.yaml: run this after a
# change to the API (tests/test_docs_site.py fails while the committed file differs from it).
schema: $(VENV)/.dev-deps
	SECRET_KEY=schema-only UPTIMY_SECRETS_KEY=schema-only $(BIN)/python manage.py spectacular --file docs/openapi.yaml

# The documentation site, rebuilt as its pages change (docs/, mkdocs.yml; README.md links into it).
docs: $(VENV)/.dev-deps
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --strict --dev-addr 127.0.0.1:$(DOCS_PORT)

test: $(VENV)/.dev-deps
	@if [ -x tests/peers/install ] && command -v npm >/dev/null 2>&1; then tests/peers/install; \
	  else echo "npm not found: peer tests against server-everything and the conformance suite will be skipped"; fi
	$(MAKE) lint
# The end-to-end tests (tests/e2e) mostly wait on real slots and restarts: tests/run_suite.py
# runs them in a pytest of their own beside the rest. PYTEST_ARGS picks tests: one pytest runs them.
# CLOCK_OFFSET=45d (or a later instant, 2027-03-28T01:05:00+00:00) moves the clock of every
# Python process of the suite ahead by that much: the suite passes on any day (tests/clock.py).
ifeq ($(strip $(PYTEST_ARGS)),)
	CLOCK_OFFSET="$(CLOCK_OFFSET)" $(BIN)/python tests/run_suite.py
else
	CLOCK_OFFSET="$(CLOCK_OFFSET)" $(BIN)/python tests/run_suite.py --single $(PYTEST_ARGS)
endif

# The engine benchmark of docs/benchmarks.md's "Engine": the fast loopback server and the client
# on cores of their own, 1000 checks with 50 in flight; BENCH_ARGS adds options (--compare-sdk).
bench: $(VENV)/.dev-deps
	tests/bench/engine.sh $(BENCH_ARGS)

# docs/benchmarks.md's "Check types beside blackbox_exporter": CPU per probe of each active type,
# Uptimy's engine and Debian's prometheus-blackbox-exporter on the same loopback targets, in a
# user and network namespace of their own (ICMP allowed there); BENCH_ARGS adds options (--json).
bench-types: $(VENV)/.dev-deps
	$(BIN)/python tests/bench/check_types.py $(BENCH_ARGS)

format: $(VENV)/.dev-deps
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache

# Two commands do all the set-up on a fresh machine with Python 3.11+ and make:
#   make run   – serve Uptimy on http://127.0.0.1:8000 (PORT to change it)
#   make test  – lint and run the whole suite
# With DATABASE_URL and REDIS_URL set, both use PostgreSQL and Redis instead of SQLite.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000

.PHONY: run test lint format bench clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Uptimy needs Python 3.11 or newer (set PYTHON=python3.x)")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Stamps reinstall only when the dependencies change.
$(VENV)/.run-deps: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

$(VENV)/.dev-deps: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	@touch $@ $(VENV)/.run-deps

run: $(VENV)/.run-deps
	DEBUG=$${DEBUG:-1} PORT=$(PORT) $(BIN)/python manage.py serve

lint: $(VENV)/.dev-deps
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: $(VENV)/.dev-deps
	@if [ -x tests/peers/install ] && command -v npm >/dev/null 2>&1; then tests/peers/install; \
	  else echo "npm not found: peer tests against server-everything and the conformance suite will be skipped"; fi
	$(MAKE) lint
	$(BIN)/pytest $(PYTEST_ARGS)

format: $(VENV)/.dev-deps
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache

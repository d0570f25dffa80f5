# `make install`, then the README's two commands, `make bench` and `make test`.
# Each one creates .venv and installs ctxneo into it first (once, and again when
# pyproject.toml changes); `.venv/bin/ctxneo` is the command line.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# setuptools announces every editable install with an "Editable installation"
# notice (its own category: InformationOnly); the install is otherwise silent.
QUIET_PIP := $(BIN)/python -W "ignore:Editable installation:UserWarning" -m pip --quiet

.PHONY: install bench test lint clean

$(BIN)/ctxneo: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit("ctxneo needs Python 3.11 or newer, found " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	@echo "installing ctxneo and its test tools into $(VENV) (once)..."
	@$(PYTHON) -m venv $(VENV)
	@$(QUIET_PIP) install --upgrade pip
	@$(QUIET_PIP) install -e '.[test,neo4j-fast,docker]'
	@touch $@

## Install ctxneo into .venv (editable, with the test tools) and say how to run it.
install: $(BIN)/ctxneo
	@echo "ctxneo is installed in $(VENV): run $(BIN)/ctxneo, or 'source $(BIN)/activate' first"

## Run the benchmark (raw dump vs TF-IDF RAG vs context graph) on the embedded store.
bench: $(BIN)/ctxneo
	$(BIN)/ctxneo bench
	@echo "(ctxneo is in $(VENV): run $(BIN)/ctxneo --help, or 'source $(BIN)/activate' first)"

## Run lint and the whole test suite; the Neo4j tests start the Neo4j they need.
test: $(BIN)/ctxneo lint
	$(BIN)/python -m pytest

lint: $(BIN)/ctxneo
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache

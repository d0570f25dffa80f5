# The two commands of the README: `make bench` and `make test`.
# Each one creates .venv and installs ctxneo into it first (once, and again
# when pyproject.toml changes).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: bench test lint clean

$(BIN)/ctxneo: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit("ctxneo needs Python 3.11 or newer, found " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,neo4j-fast,docker]'
	@touch $@

## Run the benchmark (raw dump vs TF-IDF RAG vs context graph) on the embedded store.
bench: $(BIN)/ctxneo
	$(BIN)/ctxneo bench

## Run lint and the whole test suite; the Neo4j tests start the Neo4j they need.
test: $(BIN)/ctxneo lint
	$(BIN)/python -m pytest

lint: $(BIN)/ctxneo
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache

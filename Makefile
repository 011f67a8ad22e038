# Two commands do all the set-up: `make run` and `make test`. Each creates .venv when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: run test bench lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(TEST_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test,bench]'
	touch $@ $(STAMP)

run: $(STAMP)
	@echo 'Starting the MCP server over HTTP. Stop it with Ctrl-C; another port: make run RUN_ARGS="--port 9000"'
	$(BIN)/cairn serve --http $(RUN_ARGS)

test: $(TEST_STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/python -m pytest

bench: $(TEST_STAMP)
	$(BIN)/python -m benchmarks $(BENCH_ARGS)

lint: $(TEST_STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

clean:
	rm -rf $(VENV) build dist .pytest_cache

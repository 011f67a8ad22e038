# Two commands do all the set-up: `make run` and `make test`. Each creates .venv when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: run test bench lint clean chromium screenshots

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(TEST_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test,bench]'
	touch $@ $(STAMP)

# The banner prints the web panel's login link (http://127.0.0.1:8765/?token=...): open it once.
run: $(STAMP)
	@echo 'Starting the MCP server over HTTP. Stop it with Ctrl-C; another port: make run RUN_ARGS="--port 9000"'
	$(BIN)/cairn serve --http $(RUN_ARGS)

# The browser tests drive Debian's Chromium (never Playwright's own download); CI runs as root.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		SUDO=$$( [ "$$(id -u)" -eq 0 ] || echo sudo ); \
		$$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q chromium; }

test: $(TEST_STAMP) chromium
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/python -m pytest

# docs/screenshots/*.png; Chinese pages need a CJK font (Debian: fonts-noto-cjk), installed here only.
screenshots: $(TEST_STAMP) chromium
	@fc-list :lang=zh family 2>/dev/null | grep -q . || { \
		SUDO=$$( [ "$$(id -u)" -eq 0 ] || echo sudo ); \
		$$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q fonts-noto-cjk; }
	$(BIN)/python -m tests.browser --screenshots

bench: $(TEST_STAMP)
	$(BIN)/python -m benchmarks $(BENCH_ARGS)

lint: $(TEST_STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

clean:
	rm -rf $(VENV) build dist .pytest_cache

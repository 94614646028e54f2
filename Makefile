# Canon: two commands from a fresh clone (python3, pip and make only).
#   make run   installs everything pinned, materializes every asset, prints a summary
#   make test  installs and runs the tests
PY       ?= python3
VENV     := .venv
BIN      := $(VENV)/bin
STAMP    := $(VENV)/.canon-installed
# With CANON_CONFIG the configuration file names the home (canon/core/settings.py): a
# CANON_HOME set here would override it, so the home's folders are left to Canon.
ifndef CANON_CONFIG
export CANON_HOME ?= $(CURDIR)/var
export DAGSTER_HOME ?= $(CANON_HOME)/dagster
# The int8 ONNX export of the embedding model, made once per checkout (canon/index/embedding/onnx.py).
export CANON_MODEL_CACHE ?= $(CANON_HOME)/models
endif
# The embedding model ships inside a pip package: never reach for a hub at run time.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export DO_NOT_TRACK := 1
export DBT_SEND_ANONYMOUS_USAGE_STATS := false

.PHONY: install run test lint ui bench bench-metadata clean

install: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.lock
	$(BIN)/pip install -q --no-deps --no-build-isolation -e .
	touch $(STAMP)

# The instance settings (dagster.yaml: one DuckDB-writing run at a time) go into DAGSTER_HOME once.
# (canon_run does the same for a configured home, where DAGSTER_HOME is not set here.)
run: install
	@if [ -n "$(DAGSTER_HOME)" ]; then mkdir -p $(DAGSTER_HOME); \
	  test -f $(DAGSTER_HOME)/dagster.yaml || cp dagster.yaml $(DAGSTER_HOME)/dagster.yaml; fi
	$(BIN)/python -m canon_run

test: install lint
	$(BIN)/pytest -q

# A cycle, a layer breach (canon/core -> models -> ... -> cli, see docs/design.md),
# a Dagster import inside canon/, an unused or undefined name fail the build.
lint: install
	$(BIN)/ruff check .
	$(BIN)/lint-imports

ui: install
	@export DAGSTER_HOME="$${DAGSTER_HOME:-$$($(BIN)/python -c 'from canon.core.settings import load_settings; print(load_settings().home / "dagster")')}" && \
	  mkdir -p "$$DAGSTER_HOME" && \
	  { test -f "$$DAGSTER_HOME/dagster.yaml" || cp dagster.yaml "$$DAGSTER_HOME/dagster.yaml"; } && \
	  PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/dagster dev -w workspace.yaml

bench-metadata: install
	$(BIN)/python -m bench.metadata

bench: install
	$(BIN)/python -m bench

clean:
	rm -rf $(CANON_HOME) dbt_project/target dbt_project/logs

# Headless-Chromium screenshots of the Dagster UI into docs/img (after `make run`).
# Installs Debian's chromium when no Chromium is on PATH (needs root and apt-get).
.PHONY: screenshots
screenshots: install
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  command -v google-chrome >/dev/null 2>&1 || \
	  { echo "installing Debian's chromium for headless screenshots"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }
	$(BIN)/python scripts/screenshots.py --out docs/img

# The daemon end-to-end test (~13 min): each kind of change starts exactly one run.
.PHONY: e2e
e2e: install
	$(BIN)/pytest -q tests_e2e

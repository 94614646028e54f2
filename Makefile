# Canon: two commands from a fresh clone (python3, pip and make only).
#   make run   installs everything pinned, materializes every asset, prints a summary
#   make test  installs and runs the tests
PY       ?= python3
VENV     := .venv
BIN      := $(VENV)/bin
STAMP    := $(VENV)/.canon-installed
export CANON_HOME ?= $(CURDIR)/var
export DAGSTER_HOME ?= $(CANON_HOME)/dagster
# The embedding model ships inside a pip package: never reach for a hub at run time.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export DO_NOT_TRACK := 1
export DBT_SEND_ANONYMOUS_USAGE_STATS := false

.PHONY: install run test ui bench bench-metadata clean

install: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.lock
	$(BIN)/pip install -q --no-deps --no-build-isolation -e .
	touch $(STAMP)

run: install
	@mkdir -p $(DAGSTER_HOME)
	$(BIN)/python -m canon_run

test: install
	$(BIN)/pytest -q

ui: install
	@mkdir -p $(DAGSTER_HOME)
	$(BIN)/dagster dev -w workspace.yaml

bench-metadata: install
	$(BIN)/python bench/metadata_bench.py

bench: install
	$(BIN)/python bench/run_bench.py

clean:
	rm -rf $(CANON_HOME) dbt_project/target dbt_project/logs

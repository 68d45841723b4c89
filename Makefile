# `make run` and `make test` are all a new user types: each creates ./.venv when needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8000

.PHONY: run test lint bench chaos clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	PORT=$(PORT) $(BIN)/python -m app serve

test: $(STAMP)
	$(BIN)/ruff check $(wildcard app tests bench)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check $(wildcard app tests bench)

bench: $(STAMP)
	$(BIN)/python bench/job_overhead.py
	$(BIN)/python bench/scale_out.py

# The long crash campaign: kill -9 at seeded moments, restart, check every invariant.
chaos: $(STAMP)
	$(BIN)/python -m tests.chaos --runs $(or $(RUNS),30) --seed $(or $(SEED),1)

clean:
	rm -rf $(VENV) .pytest_cache test-artifacts

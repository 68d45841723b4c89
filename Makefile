# `make run` and `make test` are all a new user types: each creates ./.venv when needed,
# from the same pinned lock a platform installs (requirements.txt), plus the tools in
# requirements-dev.txt (the embedded PostgreSQL and the tests), pinned alike.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8000

.PHONY: run test lint bench bench-queue profile chaos lock clean

$(STAMP): requirements-dev.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || { \
	  echo "Bedtime Stories needs Python 3.11 or newer (.python-version); found: $$($(PYTHON) --version 2>&1)."; \
	  echo "Install Python 3.11, or run: make PYTHON=/path/to/python3.11"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

run: $(STAMP)
	PORT=$(PORT) $(BIN)/python -m app serve

test: $(STAMP)
	$(BIN)/ruff check $(wildcard app tests bench tools)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check $(wildcard app tests bench tools)

# One table, about a minute: bytes on the wire, cold start, polls, POST -> 202 and memory,
# each against a baseline from the same run (needs wrk and chromium from Debian).
bench: $(STAMP)
	$(BIN)/python bench/perf.py

# Flame graphs (py-spy) of a poll, a card and a POST under load: test-artifacts/profile-*.svg
profile: $(STAMP)
	$(BIN)/python bench/profile.py

# The queue's own figures: job overhead, jobs/s with 1, 2 and 4 processes, POST -> running.
bench-queue: $(STAMP)
	$(BIN)/python bench/job_overhead.py
	$(BIN)/python bench/scale_out.py

# The long crash campaign: kill -9 at seeded moments, restart, check every invariant.
chaos: $(STAMP)
	$(BIN)/python -m tests.chaos --runs $(or $(RUNS),30) --seed $(or $(SEED),1)

# Re-pin the dependencies after changing pyproject.toml: requirements.txt is what a platform
# installs; requirements-dev.txt adds the extras, held to the same versions.
lock: $(STAMP)
	$(BIN)/python -m pip install --quiet uv
	$(BIN)/uv pip compile pyproject.toml --python-version 3.11 --python-platform linux \
	  --custom-compile-command "make lock" --quiet -o requirements.txt
	$(BIN)/uv pip compile pyproject.toml --extra embedded --extra test -c requirements.txt \
	  --python-version 3.11 --python-platform linux \
	  --custom-compile-command "make lock" --quiet -o requirements-dev.txt

clean:
	rm -rf $(VENV) .pytest_cache test-artifacts

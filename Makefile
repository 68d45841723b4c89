# `make run` and `make test` are all a new user types: each creates ./.venv when needed,
# from the same pinned lock a platform installs (requirements.txt), plus the tools in
# requirements-dev.txt (the embedded PostgreSQL and the tests), pinned alike. Any Python
# 3.11 to 3.14 will do: tools/find-python picks the newest on PATH (or: make PYTHON=...).
PYTHON ?= $(shell tools/find-python)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8000

.PHONY: outdated run test test-unit test-fast test-all test-real lint docs schema messages smoke bench bench-handover bench-queue bench-lighthouse bench-bytes bench-pictures bench-startup bench-growth profile chaos lock lock-real clean

$(STAMP): requirements-dev.txt
	@$(PYTHON) -c 'import sys; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 14))' 2>/dev/null || { \
	  echo "Bedtime Stories needs Python 3.11 to 3.14; found: $$($(PYTHON) --version 2>&1 || echo none)."; \
	  echo "Install one (python3.13, say), or run: make PYTHON=/path/to/python3.13"; exit 1; }
	@test -x $(BIN)/python || { echo "Using $$($(PYTHON) --version) ($(PYTHON)) for $(VENV)"; \
	  $(PYTHON) -m venv $(VENV); }
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

run: $(STAMP)
	PORT=$(PORT) $(BIN)/python -m app serve

# tools/system-packages installs what some tests need from the system (Debian's Chromium
# and PgBouncer) when it can, as root with apt; otherwise it says what to install and
# those tests are skipped, with the reason in the summary.
# pytest runs on $(WORKERS) workers (pytest-xdist), each with a PostgreSQL of its own: most
# of a test's time is spent waiting (on a poll, a process, a browser), so more workers
# than cores pays. WORKERS=0 runs it in one process; `--dist worksteal` keeps the long
# tests (the crash moments, the deploy rehearsal) from piling up on one worker.
WORKERS ?= 4
XDIST = $(if $(filter 0,$(WORKERS)),-p no:xdist,-n $(WORKERS) --dist worksteal)
# pytest keeps each test module's rewritten bytecode (its asserts made to explain
# themselves) only where bytecode may be written: where PYTHONDONTWRITEBYTECODE is set,
# every worker of every run rewrote all of tests/ again, 4 s of CPU each.
PYTEST = PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest

# The app's and the tests' bytecode is written once up front, before the workers and the
# app processes they start would each compile app/ at the same moment.
test: $(STAMP)
	@tools/system-packages
	$(BIN)/ruff check $(wildcard app tests bench tools)
	$(BIN)/mypy
	@$(BIN)/python -m compileall -q app tests
	$(PYTEST) $(XDIST) $(PYTEST_ARGS)

# The quick loops while working (pytest -m; markers in pyproject.toml, put on by
# tests/conftest.py; mypy and the rest: make test). How they were measured:
# docs/development.md, "The quick loops".
# test-unit: what needs neither PostgreSQL nor a browser, in one process (two workers
# saved a second, four cost two): 8 to 9 s here.
# test-fast: ruff, then every test but the browser's, the fault campaigns (tests/faults/),
# the long runs and the real model's, on $(WORKERS) workers: 34 to 37 s here (41 before
# each test's database was cloned ahead of it), on a nearly quiet machine.
FAST = not browser and not chaos and not slow and not real_model
UNIT = not db and $(FAST)
test-unit: $(STAMP)
	$(PYTEST) -p no:xdist -q -m "$(UNIT)" $(PYTEST_ARGS)

test-fast: $(STAMP)
	$(BIN)/ruff check $(wildcard app tests bench tools)
	@$(BIN)/python -m compileall -q app tests
	$(PYTEST) $(XDIST) -q -m "$(FAST)" $(PYTEST_ARGS)

# Everything `make test` runs, then the variants it leaves out (each browser journey at its
# other sizes, the other crash moments, the deep queue through three processes: pytest -m
# variant, tests/conftest.py or marked in place) and the long
# campaigns at their full size: the properties (pytest -m campaign) at every test's full
# count of examples, the deploy rehearsal with its build from requirements.txt alone (a
# fresh virtualenv and pip), and the 45-run crash campaign (make chaos). CI runs this;
# about 20 minutes more than `make test`.
test-all: test
	FULL_CAMPAIGNS=1 $(PYTEST) -m "campaign or variant" $(XDIST) $(PYTEST_ARGS)
	$(MAKE) chaos

# The real tier (tests/real_model, left out of make test): llama-cpp-python's OpenAI-compatible
# server with SmolLM2-135M on the CPU, and the app started as the README says. The server is
# built once into ~/.cache/bedtime-stories/ from tools/real_model/*.lock, every file
# hash-checked (tools/real_model_env.py: 16 minutes on two busy cores here, a progress line
# every 30 s, stopped past REAL_MODEL_BUILD_MINUTES, default 40; then reused until a lock
# changes); without a compiler the tier is skipped, except in CI. Then 5 to 20 minutes, by
# the machine's load (SmolLM2-135M wrote 2 to 40 tokens a second here).
test-real: $(STAMP)
	$(BIN)/python tools/real_model_env.py || [ -z "$$CI$$REAL_MODEL_REQUIRED" ] || exit 1
	$(PYTEST) -p no:xdist -m real_model tests/real_model $(PYTEST_ARGS)

# Re-pin the real tier's server and its build (tools/real_model/*.in) with every file's hash;
# a changed lock is a new cache key, so the next make test-real builds anew. Run from that
# folder: the locks name their .in as written, and the same pins must give the same bytes.
lock-real:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet uv
	cd tools/real_model && for lock in build server; do \
	  $(abspath $(BIN))/uv pip compile --universal --python-version 3.11 --generate-hashes \
	    --custom-compile-command "make lock-real" --quiet $$lock.in -o $$lock.lock || exit 1; \
	done

# ruff, then mypy: strict over app/ (pyproject.toml's tool.mypy).
lint: $(STAMP)
	$(BIN)/ruff check $(wildcard app tests bench tools)
	$(BIN)/mypy

# The docs/ site (mkdocs.yml) into site/ with zensical, --strict: a link to a missing page
# or anchor fails the build. tools/docs_check.py fails it first on what zensical does not
# check: a page left out of the nav (or named there and missing), a link to any other
# missing file or out of docs/. docs/modules.md is written from the modules' docstrings first.
docs: $(STAMP)
	$(BIN)/python tools/module_map.py
	$(BIN)/python tools/docs_check.py
	$(BIN)/zensical build --strict --clean

# sql/schema.sql, the tables the migrations make, to read in one file: a schema-only pg_dump
# of a new embedded database migrated by the app (tests/test_migrations.py checks it is current).
schema: $(STAMP)
	$(BIN)/python tools/schema.py

# The catalogues: every string the app, the templates and the scripts hand to gettext, into
# app/locale/messages.pot, then merged into each language's .po (new ones empty, to be
# written; tests/test_catalogues.py fails until they are). Compiled at start-up, in memory.
# The languages are the app's own records (app/languages.py): `python -m app languages`.
messages: $(STAMP)
	$(BIN)/pybabel --quiet extract -F babel.cfg -k N_ --add-location=file --sort-output \
	  --project "Bedtime Stories" -o app/locale/messages.pot .
	languages="$$($(BIN)/python -m app languages)" || exit 1; \
	for lang in $$languages; do \
	  $(BIN)/pybabel --quiet update --init-missing -D messages -i app/locale/messages.pot \
	    -d app/locale -l $$lang --no-fuzzy-matching --ignore-obsolete || exit 1; \
	done

# The smallest proof that a Python works end to end (CI runs it on the newest one found):
# install, start-up, one story over HTTP, the queue's own tests and background mode.
smoke: $(STAMP)
	$(BIN)/python -m pytest -q tests/queue/test_queue.py tests/queue/test_transitions.py \
	  tests/queue/test_intake.py tests/queue/test_background.py tests/test_fake_llm.py \
	  tests/test_procfile.py tests/web/test_api.py $(PYTEST_ARGS)

# One table, about three minutes: bytes on the wire, cold start, polls, POST -> 202 (with
# and without a budget) and memory, each against a baseline from the same run (needs wrk
# and chromium from Debian); then the hand-over's (bench-handover) and the pictures'
# (bench-pictures), about three minutes more.
bench: $(STAMP)
	$(BIN)/python bench/perf.py
	$(BIN)/python bench/handover.py
	$(BIN)/python bench/pictures.py

# make bench's cold start and POST -> 202 alone (no wrk, no Chromium), about a minute: run it
# a few times before and after a start-up or intake change and compare the ratios.
bench-startup: $(STAMP)
	$(BIN)/python bench/startup.py

# What a story adds to the database (rows, bytes), with and without a picture, and ten
# years of two a night (docs/deploying.md), about a minute.
bench-growth: $(STAMP)
	$(BIN)/python bench/growth.py

# Background generation (LLM_API=responses), about a minute: SIGTERM -> exit with a story
# streaming, a new process picking the story up, stop -> cancelled (and chat), one billed
# call per job.
bench-handover: $(STAMP)
	$(BIN)/python bench/handover.py

# Lighthouse's performance score of home, library and a story, on a phone and a tablet
# (npx lighthouse, or LIGHTHOUSE=/path/to/lighthouse; Debian's chromium), about 3 minutes.
bench-lighthouse: $(STAMP)
	$(BIN)/python bench/lighthouse.py

# Bytes on the wire, resource by resource: home, a story and the library after an evening,
# first and repeat visits (Debian's chromium), about a minute.
bench-bytes: $(STAMP)
	$(BIN)/python bench/bytes.py

# Flame graphs (py-spy) of a poll, a card and a POST under load, and POSTs while the worker
# writes stories: test-artifacts/profile-*.svg. In process, cProfile beside the floors:
# bench/cprofile_app.py.
profile: $(STAMP)
	$(BIN)/python bench/profile.py

# A story's picture: story stored -> picture ready beyond the drawing, and the story page
# and a library of 50 with pictures on the wire (chromium), about 2 minutes.
bench-pictures: $(STAMP)
	$(BIN)/python bench/pictures.py

# The queue's own figures: job overhead, jobs/s with 1, 2 and 4 processes, POST -> running.
bench-queue: $(STAMP)
	$(BIN)/python bench/job_overhead.py
	$(BIN)/python bench/scale_out.py

# The long crash campaign: kill -9 (and SIGTERM) at seeded moments, restart, check every
# invariant, with LLM_API=chat and LLM_API=responses (the bg_ moments), and while a
# picture is drawn (the picture_ moments): 45 runs, each of the 15 moments three times,
# about 5 minutes. MOMENTS=bg_mid_stream,bg_sigterm (or chat, bg, pictures) runs only those.
chaos: $(STAMP)
	$(BIN)/python -m tests.chaos --runs $(or $(RUNS),45) --seed $(or $(SEED),1) \
	  $(if $(MOMENTS),--moments $(MOMENTS))

# Re-pin the dependencies after changing pyproject.toml: requirements.txt is what a platform
# installs; requirements-dev.txt adds the extras, held to the same versions.
# One lock for every supported Python (--universal: markers where versions differ), then a
# check that each pin has a wheel or a source for 3.14, which this machine may not have.
# The pins already in the locks are kept where pyproject.toml still allows them; `make lock
# UPGRADE=1` raises every pin to the newest release its range allows (what make outdated lists).
lock:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet uv
	$(BIN)/uv pip compile pyproject.toml --universal --python-version 3.11 $(if $(UPGRADE),--upgrade) \
	  --custom-compile-command "make lock" --quiet -o requirements.txt
	$(BIN)/uv pip compile pyproject.toml --extra embedded --extra test --extra docs \
	  -c requirements.txt $(if $(UPGRADE),--upgrade) \
	  --universal --python-version 3.11 \
	  --custom-compile-command "make lock" --quiet -o requirements-dev.txt
	$(BIN)/python tools/check_wheels.py 3.14

# The pins behind the registry's newest releases, one WARNING line each (pip's own index;
# never a failure): raise a range in pyproject.toml if needed, then make lock. CI prints it.
outdated: $(STAMP)
	$(BIN)/python tools/outdated.py

clean:
	rm -rf $(VENV) .pytest_cache test-artifacts

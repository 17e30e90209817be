# Two commands on a fresh machine: `make demo` and `make test`. Each installs what it needs.
SHELL := /bin/bash
export UV_PYTHON_DOWNLOADS := never
export DO_NOT_TRACK := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false

# uv from PATH, else the copy pip bootstraps into the machine's Python.
UV := $(shell command -v uv 2>/dev/null || echo "python3 -m uv")

.PHONY: help bootstrap install sandbox-tools demo test check lint typecheck test-only bench clean

help:
	@echo "make demo   - run one swarm over the offline sandbox GitHub with the scripted model"
	@echo "make test   - lint, type-check and run the whole test suite (SQLite and PostgreSQL)"
	@echo "make bench  - run the benchmarks in bench/"

bootstrap:
	@command -v uv >/dev/null 2>&1 || python3 -m uv --version >/dev/null 2>&1 || \
		python3 -m pip install --quiet --disable-pip-version-check uv

# Bytecode is compiled here, once: a machine may forbid writing .pyc files at import
# (PYTHONDONTWRITEBYTECODE), and then every swarm command would compile anthropic's and
# Prefect's ~5,000 modules again (about 4 s of CPU; bench/first_hour.py).
install: bootstrap
	@$(UV) sync --frozen --quiet --compile-bytecode
	@if [ -d agents ]; then $(UV) run --frozen python -m compileall -q agents flows sandbox; fi

# A repository's test command runs only under bubblewrap's bwrap (agents/confine); without it
# the writer runs no tests and says so. Installed here when missing and we are root on Debian.
sandbox-tools:
	@command -v bwrap >/dev/null 2>&1 || { \
		if [ "$$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing Debian's bubblewrap (the sandbox for repositories' tests)"; \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null 2>&1 || \
			{ DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
			  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; } || \
			echo "note: bubblewrap could not be installed; repositories' tests will not run"; \
		else \
			echo "note: no bwrap; repositories' tests will not run (sudo apt-get install bubblewrap)"; \
		fi; }

demo: install sandbox-tools
	$(UV) run swarm demo

check: install lint typecheck

lint:
	$(UV) run ruff check .
	$(UV) run ruff format --check .

typecheck:
	$(UV) run mypy

# The suite runs on 4 pytest-xdist workers, more than CI's 2 cores: most tests wait on a server,
# a subprocess or a browser, not the CPU (issue 33: a fresh clone's `.ci/run` took 1,322 s of
# pytest on 4 workers against 1,872 s on 2). Tests that share one server stay on one worker
# (tests/xdist_groups.py). Six workers were tried (issue 33): 1,850 s against 1,928 s on
# four, within the machine's noise, with the cores then busy throughout and a webhook POST
# left unanswered for 30 s in a receiver-crash test. Since then the tests wait less (sandbox
# pacing) and the cores were busy only in the first half of a run on four: five workers took a
# fresh clone's pytest from 787 s to 752 s (issue 33, 2026-12-07), both cores busy until ~400 s
# and 1.6-1.9 after; with the session's shared Prefect server then moved to PostgreSQL (SQLite
# met "database is locked" under five), two fresh clones' `.ci/run` took 672 s and 669 s of
# pytest. The 25 slowest tests are listed at the end.
TEST_WORKERS ?= 5
test-only: install
	$(UV) run pytest -n $(TEST_WORKERS) --dist loadgroup --durations=25

test: check test-only

bench: install sandbox-tools
	$(UV) run python bench/identity.py
	$(UV) run python bench/throttle.py
	$(UV) run python bench/shared_budget.py
	$(UV) run python bench/store.py --events 100000
	$(UV) run python bench/prompt_cache.py
	$(UV) run python bench/llm_throttle.py
	$(UV) run python bench/context.py
	$(UV) run python bench/swarm.py
	$(UV) run python bench/github_calls.py
	$(UV) run python bench/events.py --pushes 50
	$(UV) run python bench/first_hour.py
	$(UV) run python bench/confine.py
	$(UV) run python bench/patterns.py
	@echo "bench/swarm_pool.py (1,000 PRs over a work pool, ~15 min) runs on its own"

clean:
	rm -rf .swarm .pytest_cache .mypy_cache .ruff_cache

# Every target builds .venv itself on first use; nothing needs to be installed by hand
# beyond a Python >= 3.11, and >= 3.12 for the bat-adk test agents (scripts/find-python
# says what to install when there is none).
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
# This machine sets PYTHONDONTWRITEBYTECODE=1; without compiled bytecode imports are ~3x slower.
export UV_COMPILE_BYTECODE := 1
export PYTHONDONTWRITEBYTECODE :=

.PHONY: venv venv-test demo lint test bench ui clean browser screenshots

# What running the pipeline needs (make demo, make ui); the test extras (moto, playwright,
# mypy, ...) only for the targets that test, lint or measure.
venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml scripts/find-python scripts/bootstrap
	@bash scripts/bootstrap
	@touch $@

venv-test: $(VENV)/.installed-test

$(VENV)/.installed-test: $(VENV)/.installed
	@bash scripts/bootstrap test
	@touch $@

# The agent example, the AgentV examples (the batch runner and graders run with the venv's
# python3, first on PATH below; the assistants' targets are the weather agent over A2A and
# plain LLMs, all answered by the scripted model server), then the agent example judged
# with weighted rubrics and medians of three runs (judges.yaml); all land in the same
# warehouse. The last line printed is the path of that run's HTML report.
demo: venv
	$(VENV)/bin/bat-pipeline demo
	$(VENV)/bin/bat-pipeline run bat_pipeline/example/screening/screening.yaml
	$(VENV)/bin/bat-pipeline run bat_pipeline/example/assistants/assistants.yaml
	cd bat_pipeline/example/scenarios && $(abspath $(VENV))/bin/bat-pipeline run run_config.yaml
	$(VENV)/bin/bat-pipeline run bat_pipeline/example/weather_agent/adk/weather.evalset.json
	$(VENV)/bin/bat-pipeline run bat_pipeline/example/weather_agent/eval/judges.yaml
	@echo
	@echo "make demo: six runs done. Open the last report above first (the weather agent, judged"
	@echo "by rubrics); then browse every run: $(VENV)/bin/bat-pipeline ui bat_pipeline/example/weather_agent"

# Debian's chromium, which the HTML report's browser test drives through playwright
# (bat_pipeline_tests/pipeline/test_report.py). Needs root; on other systems install a
# Chromium and put it on PATH as `chromium`. Installs only what is missing and never
# upgrades an installed package (scripts/install-browser).
browser:
	@bash scripts/install-browser

# The venv's bin first: tests start agents with `uv run .` and the venv carries uv.
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

# Lint, format, types and layers are checked before any test runs: they take seconds, the
# tests minutes. All four run even when one fails, so one pass shows every problem. Settings
# live in pyproject.toml ([tool.ruff], [tool.mypy]: strict on bat_pipeline/engine,
# [tool.importlinter]: the layers, docs/architecture.md).
lint: venv-test
	@status=0; \
	$(VENV)/bin/ruff check . || status=1; \
	$(VENV)/bin/ruff format --check . || status=1; \
	$(VENV)/bin/mypy || status=1; \
	$(VENV)/bin/lint-imports --no-cache >/dev/null || { $(VENV)/bin/lint-imports --no-cache; status=1; }; \
	exit $$status

# The suite on one xdist worker per core plus one, at most 8: the end-to-end tests spend part of
# their time waiting on the processes they start, and the extra worker fills that time; more
# workers only compete for the cores (2 cores, back to back: 3 workers 3:58 and 459 CPU-s for
# the whole machine, 4 workers 4:28 and 531). pyproject.toml: a whole file at a time, longest first.
PYTEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); w=$$((n + 1)); [ $$w -gt 8 ] && w=8; echo $$w)

# The suite's temporary files in memory where there is a tmpfs with room (scripts/test-tmpdir
# says why); `make test TEST_TMPDIR=` keeps them in the system's temporary folder.
TEST_TMPDIR ?= $(shell bash scripts/test-tmpdir)

# The project's modules are byte-compiled once first (uv compiles the venv's packages, not
# an editable project): in a fresh clone every worker would compile them at the same time.
test: venv-test lint browser
	bash scripts/prepare-bat-adk >/dev/null
	bash scripts/prepare-agentv-corpus >/dev/null
	$(PY) -m compileall -q -j 0 bat_pipeline bat_pipeline_tests >/dev/null
	$(if $(TEST_TMPDIR),TMPDIR=$(TEST_TMPDIR)) $(PY) -m pytest -q -p no:cacheprovider -n $(PYTEST_WORKERS) $(PYTEST_ARGS)

# The README's picture of the HTML report, retaken by its browser test.
screenshots: venv-test browser
	bash scripts/prepare-bat-adk >/dev/null
	UPDATE_SCREENSHOTS=1 $(PY) -m pytest -q -p no:cacheprovider bat_pipeline_tests/pipeline/test_report.py

bench: venv-test
	$(PY) -m bat_pipeline_tests.bench

ui: venv
	$(VENV)/bin/bat-pipeline ui

clean:
	rm -rf $(VENV) .bat_pipeline
	find bat_pipeline/example -name .bat_pipeline -type d -prune -exec rm -rf {} +

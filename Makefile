# Two commands do all the set-up on a fresh machine: `make demo` and `make test`.
# Both virtualenvs and the offline AppWorld world are created on first use, idempotently.

PYTHON ?= python3
VENV := .venv
AW_VENV := .venv-appworld
APPWORLD_ROOT ?= $(CURDIR)/.appworld
export APPWORLD_ROOT

# What the built world depends on: the pack and the builder (serve.py only launches servers).
WORLD_SOURCES := $(filter-out scenarios/appworld/world/serve.py,$(shell find scenarios/appworld/world -name '*.py' 2>/dev/null))
WORLD_STAMP := $(APPWORLD_ROOT)/data/.built

.PHONY: setup venvs world browser sandbox demo test test-fast bench clean clean-world

setup: venvs world

venvs: $(VENV)/.installed $(AW_VENV)/.installed

$(VENV)/.installed: requirements.txt pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -r requirements.txt
	$(VENV)/bin/pip install -q --no-deps -e .
	$(VENV)/bin/appworld-green compat install
	touch $@

$(AW_VENV)/.installed: requirements-appworld.txt
	test -x $(AW_VENV)/bin/python || $(PYTHON) -m venv $(AW_VENV)
	$(AW_VENV)/bin/pip install -q --upgrade pip
	$(AW_VENV)/bin/pip install -q -r requirements-appworld.txt
	$(AW_VENV)/bin/appworld install
	touch $@

world: $(WORLD_STAMP)

$(WORLD_STAMP): $(VENV)/.installed $(AW_VENV)/.installed $(WORLD_SOURCES)
	$(VENV)/bin/appworld-green world build

# Debian's Chromium, for the HTML report test (tests/test_report_html.py opens it headless).
browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; }

# Debian's bubblewrap: the sandbox code mode runs agent code in (docs/code-mode.md).
sandbox:
	@command -v bwrap >/dev/null 2>&1 || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap; }

demo: setup
	$(VENV)/bin/appworld-green demo

test: setup browser sandbox
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider

test-fast: venvs
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider -m "not e2e"

bench: setup
	$(VENV)/bin/python bench/run_all.py

clean-world:
	rm -rf $(APPWORLD_ROOT)

clean: clean-world
	rm -rf $(VENV) $(AW_VENV) runs

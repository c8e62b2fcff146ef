# Two commands do all the set-up on a fresh machine: `make demo` and `make test`.
# Both virtualenvs and the offline AppWorld world are created on first use, idempotently.

PYTHON ?= python3
VENV := .venv
AW_VENV := .venv-appworld
A2A1_VENV := .venv-a2a1
PHOENIX_VENV := .venv-phoenix
APPWORLD_ROOT ?= $(CURDIR)/.appworld
export APPWORLD_ROOT

# What the built world depends on: the pack and the builder (serve.py only launches servers).
WORLD_SOURCES := $(filter-out scenarios/appworld/world/serve.py,$(shell find scenarios/appworld/world -name '*.py' 2>/dev/null))
WORLD_STAMP := $(APPWORLD_ROOT)/data/.built

.PHONY: setup venvs world browser sandbox inspect phoenix demo test test-fast bench image-check clean clean-world

setup: venvs world

venvs: $(VENV)/.installed $(AW_VENV)/.installed $(A2A1_VENV)/.installed

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

# a2a-sdk 1.x, for the 1.x client conformance test only (tests/test_a2a_sdk1_client.py); never imported by us.
$(A2A1_VENV)/.installed: requirements-a2a1.txt
	test -x $(A2A1_VENV)/bin/python || $(PYTHON) -m venv $(A2A1_VENV)
	$(A2A1_VENV)/bin/pip install -q -r requirements-a2a1.txt
	touch $@

# Inspect AI, the optional extra behind `appworld-green export --format inspect` (tests/test_trace_inspect.py reads
# the export back with inspect_ai's own reader and opens it in its own viewer, `inspect view`, in headless Chromium);
# only new packages, none of requirements.txt's pins move.
inspect: $(VENV)/.inspect

$(VENV)/.inspect: $(VENV)/.installed requirements-inspect.txt
	$(VENV)/bin/pip install -q -r requirements-inspect.txt
	touch $@

# Phoenix (arize-phoenix), in a virtualenv of its own: the OpenTelemetry collector and viewer that
# tests/test_trace_otlp_phoenix.py starts on loopback, sends battles to and reads back with Phoenix's own client
# (docs/trace.md, "In Phoenix"). Never imported by the Green.
phoenix: $(PHOENIX_VENV)/.installed

$(PHOENIX_VENV)/.installed: requirements-phoenix.txt
	test -x $(PHOENIX_VENV)/bin/python || $(PYTHON) -m venv $(PHOENIX_VENV)
	$(PHOENIX_VENV)/bin/pip install -q --upgrade pip
	$(PHOENIX_VENV)/bin/pip install -q -r requirements-phoenix.txt
	touch $@

world: $(WORLD_STAMP)

$(WORLD_STAMP): $(VENV)/.installed $(AW_VENV)/.installed $(WORLD_SOURCES)
	$(VENV)/bin/appworld-green world build

# Debian's Chromium, for the HTML report test (tests/test_report_html.py opens it headless), and Debian's jq,
# which runs the leaderboard template's merge program in tests/test_leaderboard_e2e.py.
browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; }
	@command -v jq >/dev/null 2>&1 || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q jq; }

# Debian's bubblewrap: the sandbox code mode runs agent code in (docs/code-mode.md); libseccomp2: its landlock
# fallback's seccomp filter (pyseccomp, in requirements.txt, loads it), for where namespaces are not allowed.
sandbox:
	@command -v bwrap >/dev/null 2>&1 || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap; }
	@ldconfig -p | grep -q 'libseccomp\.so\.2 ' || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libseccomp2; }

demo: setup
	$(VENV)/bin/appworld-green demo

# Two phases (docs/testing.md): everything not marked `serial` on TEST_WORKERS pytest-xdist workers, files sent
# out slowest first; then the `serial` tests alone. Both run whatever the first gave; either failing fails the
# target; a phase that selects no test (pytest's exit 5) is not a failure.
TEST_WORKERS ?= 2
PYTEST := $(VENV)/bin/python -m pytest -q -p no:cacheprovider

test: setup browser sandbox inspect phoenix
	@status=0; \
	echo "== parallel phase: $(TEST_WORKERS) workers, not serial"; \
	$(PYTEST) -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder -m "not serial" --durations=15 $(PYTEST_ARGS) \
		|| [ $$? -eq 5 ] || status=1; \
	echo "== serial phase: the tests that need the machine to themselves"; \
	$(PYTEST) -m serial $(PYTEST_ARGS) || [ $$? -eq 5 ] || status=1; \
	exit $$status

test-fast: venvs
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider -m "not e2e"

bench: setup
	$(VENV)/bin/python bench/run_all.py

# Build the image here (debootstrap + buildah) and check it from outside: minutes, root; not part of `test`.
image-check: setup
	scripts/image_check.sh

clean-world:
	rm -rf $(APPWORLD_ROOT)

clean: clean-world
	rm -rf $(VENV) $(AW_VENV) $(A2A1_VENV) $(PHOENIX_VENV) runs

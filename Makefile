# The two set-up commands on a fresh Debian machine (root, nothing but Python):
#   make demo   installs everything and builds the embedded demo release
#   make test   installs everything the tests need and runs every test tier
# Both are idempotent.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.recon-installed
ENGINE  = $(PY) -c "import sys; from recon.sandbox.machine import engine_main; sys.exit(engine_main())"
IMAGE   = $(PY) -c "import sys; from recon.sandbox.machine import image_main; sys.exit(image_main())"
IMAGE_LOG := $(VENV)/image-build.log
DEBS   := chromium fonts-dejavu-core fonts-liberation2 docker.io debootstrap iproute2

.PHONY: demo test system venv engine image deps lint bench clean-state

demo: system venv deps
	@$(ENGINE) || echo "make demo: no docker engine could start; the demo release uses the native backend"
	$(VENV)/bin/doit release:demo
	@echo "demo release: releases/demo/release.json, releases/demo/manifest.json, releases/demo/site/index.html"

# The sandbox image is built (or found) in the background while pytest runs the tests that
# need no engine; the docker tier runs last (tests/conftest.py) and waits on the same lock.
test: system venv deps
	@$(ENGINE) || echo "make test: no docker engine could start; the docker tier will skip and say why"
	@$(IMAGE) > $(IMAGE_LOG) 2>&1 & image=$$!; \
	$(PY) -m pytest -p no:cacheprovider --durations=30; rc=$$?; \
	wait $$image; cat $(IMAGE_LOG); \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests; that is a failure"; exit 1; fi; \
	exit $$rc

# The sandbox image formal attempts run in, built when the engine lacks it.
image: system venv engine deps
	$(IMAGE)

system:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

venv: $(STAMP)

# Start dockerd (no bridge, no iptables: attempts run with --network none) unless one answers.
engine: system venv
	$(ENGINE)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

# The offline dependency store (npm packages and wheels pinned in recon/sandbox/offline_deps.yaml),
# fetched once with npm and pip: the only registry access; attempts and tests never fetch.
DEPS_STAMP := store/deps/.fetched
deps: $(DEPS_STAMP)

$(DEPS_STAMP): recon/sandbox/offline_deps.yaml recon/sandbox/deps.py | venv
	@command -v npm >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm)
	$(VENV)/bin/recon deps fetch
	mkdir -p $(dir $(DEPS_STAMP)) && touch $(DEPS_STAMP)

lint: venv
	$(VENV)/bin/ruff check recon tests bench dodo.py
	$(VENV)/bin/ruff format --check recon tests bench dodo.py
	$(VENV)/bin/mypy

bench: system venv engine deps
	$(PY) bench/dag_noop.py
	$(PY) bench/dag_real.py
	$(PY) bench/render_capture.py
	$(PY) bench/grade_speed.py
	$(PY) bench/sandbox_overhead.py
	$(PY) bench/attempt_throughput.py

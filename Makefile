# The two set-up commands on a fresh Debian machine (root, nothing but Python):
#   make demo   installs everything and builds the embedded demo release
#   make test   installs everything the tests need and runs every test tier
# Both are idempotent.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.recon-installed
DEBS   := chromium fonts-dejavu-core fonts-liberation2

.PHONY: demo test system venv lint bench clean-state

demo: system venv
	$(VENV)/bin/doit release:demo
	@echo "demo release: releases/demo/release.json, releases/demo/manifest.json, releases/demo/site/index.html"

test: system venv
	@$(PY) -m pytest -p no:cacheprovider; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests; that is a failure"; exit 1; fi; \
	exit $$rc

system:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

lint: venv
	$(VENV)/bin/ruff check recon tests bench dodo.py
	$(VENV)/bin/ruff format --check recon tests bench dodo.py
	$(VENV)/bin/mypy

bench: system venv
	$(PY) bench/dag_noop.py

# agentenvs: `make run` runs the main job, `make test` passes the tests. Both install first.
# Every install step is skipped when already done (stamps in .venv, docker's build cache).

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The ART adapter's tests run in a venv of their own: openpipe-art 0.5 needs openai<3 (see pyproject.toml).
ART_VENV := .venv-art
# So do the verl adapter's: verl 0.9 pins transformers<5.11, and TRL in .venv needs 5.13 or later.
VERL_VENV := .venv-verl
PYTEST_TIMEOUT ?= 300
PYTEST_ARGS ?=

.PHONY: install system venv art-venv verl-venv run test bench clean distclean

install: system venv art-venv verl-venv

# apt packages, the Docker engine, the local base image and the sandbox images.
system:
	bash scripts/install-system.sh

venv: $(VENV)/.installed $(VENV)/.installed-trl $(VENV)/.installed-openrlhf

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[all]'
	touch $@

# The TRL adapter's test trains a tiny model on the CPU. torch is named with its exact version: 2.13.0 is
# a CPU build that pip finds on this machine's disk, where a bare or ranged torch would fetch a CUDA build of GBs.
$(VENV)/.installed-trl: $(VENV)/.installed
	$(BIN)/pip install --quiet -e '.[trl]' 'torch==2.13.0'
	touch $@

# The OpenRLHF adapter's test runs OpenRLHF's own agent executor (openrlhf/utils/agent.py), which imports only
# aiohttp, torch and transformers, and through openrlhf/utils/__init__.py sympy and pylatexenc. openrlhf itself
# requires flash-attn==2.8.3 and deepspeed==0.19.6, which do not install on a CPU machine, and pins ray and
# transformers to other versions than ours; that module uses none of them. So it is installed with --no-deps,
# plus what its import needs.
$(VENV)/.installed-openrlhf: $(VENV)/.installed-trl
	$(BIN)/pip install --quiet --no-deps 'openrlhf==0.11.2'
	$(BIN)/pip install --quiet aiohttp sympy pylatexenc
	touch $@

art-venv: $(ART_VENV)/.installed

$(ART_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(ART_VENV)
	$(ART_VENV)/bin/pip install --quiet --upgrade pip
	$(ART_VENV)/bin/pip install --quiet -e '.[art,docker,web]' 'fastapi>=0.110' 'uvicorn>=0.29' 'httpx>=0.27' 'pytest>=8' 'pytest-timeout>=2.3'
	touch $@

# torch==2.13.0 for the reason given at .installed-trl.
verl-venv: $(VERL_VENV)/.installed

$(VERL_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VERL_VENV)
	$(VERL_VENV)/bin/pip install --quiet --upgrade pip
	$(VERL_VENV)/bin/pip install --quiet -e '.[verl,docker,web]' 'fastapi>=0.110' 'uvicorn>=0.29' 'httpx>=0.27' 'torch==2.13.0' 'pytest>=8' 'pytest-timeout>=2.3'
	touch $@

# The main job: the starter suite (terminal + text-game tasks, local sandbox) with the
# oracle and the random policy, each run scored with its report.html, then side by side. It needs
# neither adapter venv (.venv-art, .venv-verl: only their tests do).
RUNS ?= runs
run: system venv
	rm -rf $(RUNS)/starter-oracle $(RUNS)/starter-random
	$(BIN)/agentenvs run --suite starter --policy oracle --out $(RUNS)/starter-oracle
	$(BIN)/agentenvs run --suite starter --policy random --trials 2 --out $(RUNS)/starter-random
	$(BIN)/agentenvs compare $(RUNS)/starter-oracle $(RUNS)/starter-random

# tests/gui and tests/swe run beside the rest, in a second pytest (scripts/run-tests.sh); PYTEST_ARGS runs one.
test: install
	scripts/run-tests.sh $(BIN)/pytest -q -p no:cacheprovider --timeout=$(PYTEST_TIMEOUT) --durations=0 \
		--durations-min=4 -- $(PYTEST_ARGS)

bench: install
	for script in benchmarks/*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

# Remove caches and the containers/snapshots of agentenvs processes that died.
clean:
	-$(BIN)/python -c "from agentenvs.sandbox.docker_engine import sweep_docker; print('swept', sweep_docker())"
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +
	rm -rf .pytest_cache .test-logs build dist

distclean: clean
	rm -rf $(VENV) $(ART_VENV) $(VERL_VENV)

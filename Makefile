# hermes-hub: `make serve` runs the hub with ./hub.json, `make test` runs every test.
# Both create what they need (the .venv, the npm tools for interop tests) on first use.

PYTHON ?= python3
# `make serve PORT=8601` when 8600 is taken (default: hub.port in hub.json)
PORT   ?=
VENV   := .venv
BIN    := $(abspath $(VENV))/bin
export PATH := $(BIN):$(PATH)

.PHONY: serve serve-stdio test test-fast bench check clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

interop/.installed: interop/package.json interop/package-lock.json interop/requirements-time.txt interop/install.sh
	bash interop/install.sh
	touch $@

# the MCP hosts tests/interop/test_hosts_live.py runs (docs/testing.md): `npm install` of the lock file, not
# `npm ci`, which refuses a lock without the other platforms' optional packages (the registry here lacks some);
# then only the two install scripts that put the native binaries of Claude Code and opencode in place
interop/hosts/.installed: interop/hosts/package.json interop/hosts/package-lock.json
	cd interop/hosts && npm install --no-save --no-audit --no-fund --ignore-scripts --loglevel=error \
		&& npm rebuild --loglevel=error @anthropic-ai/claude-code opencode-ai
	touch $@

serve: $(VENV)/.installed
	$(BIN)/hermes-hub serve --config hub.json $(if $(PORT),--port $(PORT))

serve-stdio: $(VENV)/.installed
	$(BIN)/hermes-hub serve --stdio --config hub.json

check: $(VENV)/.installed
	$(BIN)/hermes-hub check hub.json

# the suite runs in parallel workers, a test file per worker (its module fixtures stay shared); most of
# the time goes into the hubs and servers the tests start; more workers than cores makes timing tests flaky
WORKERS ?= 2
test: $(VENV)/.installed interop/.installed interop/hosts/.installed
	$(BIN)/python -m pytest -n $(WORKERS) --dist loadfile --durations=20 $(PYTEST_ARGS)

# the tests not marked slow (no served hub, third-party tool, browser or PostgreSQL): about 2 minutes
test-fast: $(VENV)/.installed interop/.installed
	$(BIN)/python -m pytest -n $(WORKERS) --dist loadfile -m "not slow" --durations=10 $(PYTEST_ARGS)

bench: $(VENV)/.installed
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) interop/node_modules interop/.venv-time interop/.installed interop/hosts/node_modules \
		interop/hosts/.installed .data

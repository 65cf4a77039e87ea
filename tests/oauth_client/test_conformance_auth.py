"""The MCP conformance suite's client `auth/*` scenarios against the hub's downstream OAuth client.

For each scenario the suite starts an OAuth-protected MCP server and authorization server and runs
tests/oauth_client/conformance_client.py with the server's URL: the real `hermes-hub login` (a $BROWSER
following the authorization URL to the loopback callback), then a tool call through the hub with the
stored grant. The suite grades every step (discovery, registration or CIMD, PKCE, resource, scopes,
token endpoint authentication) and the call.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.interop.conftest import CONFORMANCE, INTEROP, NODE22, require

pytestmark = pytest.mark.slow

DRIVER = Path(__file__).with_name("conformance_client.py")
PASSING = [
    "auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3", "auth/basic-cimd",
    "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported", "auth/scope-omitted-when-undefined",
    "auth/scope-step-up", "auth/scope-retry-limit", "auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none", "auth/pre-registration", "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch", "auth/offline-access-scope", "auth/offline-access-not-supported",
]
CANNOT_PASS = {
    "auth/2025-03-26-oauth-metadata-backcompat": (
        "the SDK's client (mcp 2.3) checks RFC 8414 §3.3 / SEP-2468: on the 2025-03-26 path (no protected-resource "
        "metadata) the authorization server's issuer must be the MCP server's origin; this scenario's metadata "
        "names the issuer http://localhost:PORT/oauth, so the client refuses it (OAuthFlowError: issuer mismatch) "
        "by design"),
}


def run(scenario: str) -> str:
    require(NODE22, CONFORMANCE)
    done = subprocess.run([str(NODE22), str(CONFORMANCE), "client", "--command", f"{sys.executable} {DRIVER}",
                           "--scenario", scenario, "--timeout", "90000"],
                          cwd=INTEROP, capture_output=True, text=True, timeout=110)
    return done.stdout + done.stderr


@pytest.mark.parametrize("scenario", PASSING + sorted(CANNOT_PASS))
def test_the_conformance_auth_scenario_passes_through_hermes_hub_login_and_a_call(scenario):
    if scenario in CANNOT_PASS:
        pytest.xfail(CANNOT_PASS[scenario])
    out = run(scenario)
    passed = re.search(r"Passed: (\d+)/(\d+), (\d+) failed", out)
    assert passed and passed.group(3) == "0" and "OVERALL: PASSED" in out, out[-4000:]

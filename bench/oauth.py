"""OAuth benchmark (issue 18): what a token refresh costs a tool call, against a plain call.

    python -m bench.oauth [--quick]        (also: python -m bench oauth)

An in-process hub calls a tool of a local OAuth-protected MCP server (tests/oauth_client/protected.py:
the server and its authorization server, real HTTP on loopback) with a grant the hub signed in for.
* plain: the token is valid; one POST per call.
* refresh on 401: before each call the server forgets its access tokens, so the call is refused (401),
  the hub refreshes (a token request) and sends it again; the grant is sealed and written back each time.
Printed: median and p90 per call, and the ratio of the two medians (measured in the same run).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
from mcp.shared.auth import AuthorizationCodeResult

from bench import run_alone
from bench.proxy import table
from hermes_hub.infra.config import parse_config
from hermes_hub.downstream.signin import sign_in
from hermes_hub.app.hub import Hub
from tests.oauth_client.protected import Protected, serving

RESULTS = Path(__file__).resolve().parent / "results"


async def _measure(n: int) -> dict[str, dict[str, float]]:
    protected = Protected()
    async with serving(protected) as url:
        with tempfile.TemporaryDirectory() as tmp:
            config = parse_config({"mcpServers": {"crm": {"url": url}}, "storage": {"url": f"sqlite:///{tmp}/hub.db"}})
            async with Hub(config) as hub:
                await _sign_in(hub, url)
                with anyio.fail_after(30):
                    await hub.pool.wait_for(lambda: hub.pool.connections["crm"].ready)
                async with hub.client() as host:
                    async def plain() -> None:
                        pass

                    for _ in range(10):  # warm: connections opened, code paths loaded
                        await host.call_tool("crm_whoami", {})
                    out = {}
                    for label, before in (("plain call", plain), ("call + refresh on 401", _revoke(protected))):
                        times = []
                        for _ in range(n):
                            await before()
                            started = time.perf_counter()
                            result = await host.call_tool("crm_whoami", {})
                            times.append((time.perf_counter() - started) * 1000)
                            assert not result.is_error, result
                        times.sort()
                        out[label] = {"median_ms": statistics.median(times), "p90_ms": times[int(len(times) * 0.9)]}
                    out["refreshes"] = {"count": protected.refreshes}
                    return out


def _revoke(protected: Protected):  # type: ignore[no-untyped-def]
    async def before() -> None:
        protected.revoke_access()
    return before


async def _sign_in(hub: Hub, url: str) -> None:
    """What `hermes-hub login` does, with a "browser" that approves at once and hands the code back."""
    came_back: list[AuthorizationCodeResult] = []

    async def browse(auth_url: str) -> None:
        async with httpx2.AsyncClient() as http:
            location = (await http.get(auth_url)).headers["location"]
        q = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
        came_back.append(AuthorizationCodeResult(code=q["code"], state=q["state"]))

    async def code() -> AuthorizationCodeResult:
        return came_back[-1]

    cfg = hub.config.mcp_servers["crm"]
    await sign_in(hub.grants, "crm", cfg, redirect_uri="http://127.0.0.1:9/callback", open_url=browse, wait_code=code)


async def run(quick: bool = False) -> None:
    n = 30 if quick else 200
    out = await _measure(n)
    base, refreshed = out["plain call"]["median_ms"], out["call + refresh on 401"]["median_ms"]
    rows = [[label, f"{v['median_ms']:.2f}", f"{v['p90_ms']:.2f}"] for label, v in out.items() if "median_ms" in v]
    print(f"\nOAuth: a tool call through the hub to an OAuth-protected server ({n} calls each)")
    print(table(["case", "median ms", "p90 ms"], rows))
    print(f"a refresh on 401 costs {refreshed - base:.2f} ms per call: {refreshed / base:.1f}x a plain call "
          f"({out['refreshes']['count']} refreshes)")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "oauth.json").write_text(json.dumps({"calls": n, **out, "ratio": refreshed / base}, indent=2))


if __name__ == "__main__":
    run_alone("oauth", run, __doc__)

"""OAuth token benchmark (issue 18): what checking a host's OAuth access token costs per request, and
what a refresh costs, against the check of a static hub token measured in the same run.

    python -m bench.oauth_tokens [--quick]        (also: python -m bench oauth_tokens)

Everything runs in-process against a real SQLite file through the hub's own ``Verifier`` (what the
bearer middleware awaits on every /mcp request), so each figure includes the SHA-256 of the token, the
worker-thread hop and the store's read:

* static (hub.json): an ``auth.tokens`` entry, matched in memory: the floor;
* static (token create): a token made with ``hermes-hub token create``, found by its hash in the store:
  the baseline (target ratio reported against it);
* OAuth access token: found by its hash, joined with its grant (revoked? expired? which endpoint?);
* refresh: load the refresh token, spend it, issue a new pair (three writes, one read).

Target: an OAuth check under 0.2 ms (p50). Blocks alternate between the routes so noise hits each alike.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any


from bench import run_alone
from hermes_hub.protocol.authorization.grants import Grants
from hermes_hub.protocol.authorization.verifier import Verifier
from hermes_hub.infra.call import Identity
from hermes_hub.services.identity import Authenticator, StaticToken, create_token
from hermes_hub.infra.storage import open_store

RESULTS = Path(__file__).resolve().parent / "results"
TARGET_MS = 0.2


async def _sign_in(grants: Grants) -> tuple[str, str]:
    """One approved sign-in, through the same steps as the consent page and token endpoint."""
    request_id = await grants.open_request("bench-client", {
        "state": None, "scopes": ["mcp"], "code_challenge": "x", "redirect_uri": "http://127.0.0.1:9/cb",
        "explicit": True, "resource": "/mcp", "resource_url": "http://127.0.0.1/mcp"})
    code, _ = await grants.approve(request_id, Identity("bench"), "Bench Host")
    _, grant = await grants.load(code, "code", "bench-client")  # type: ignore[misc]
    await grants.spend(code, grant, "code")
    issued = await grants.issue(grant)
    return issued.access_token, issued.refresh_token


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"p50_ms": statistics.median(ordered) * 1000, "p99_ms": ordered[int(len(ordered) * 0.99)] * 1000,
            "n": len(ordered)}


async def run(quick: bool = False) -> dict[str, Any]:
    rounds, block = (10, 50) if quick else (40, 100)
    with tempfile.TemporaryDirectory() as folder:
        async with open_store(f"sqlite:///{folder}/bench.db") as store:
            authenticator = Authenticator(store, [StaticToken("hh_static_bench_token_0123456789", "bench")])
            grants = Grants(store)
            verifier = Verifier(authenticator, grants)
            created, _ = await create_token(store, "bench")
            access, refresh = await _sign_in(grants)
            refresh_box = [refresh]

            async def check(token: str) -> Callable[[], Awaitable[Any]]:
                async def go() -> None:
                    assert (await verifier.verify(token, "/mcp")).identity is not None
                return go

            async def renew() -> None:
                _, grant = await grants.load(refresh_box[0], "refresh", "bench-client")  # type: ignore[misc]
                await grants.spend(refresh_box[0], grant, "refresh token")
                refresh_box[0] = (await grants.issue(grant)).refresh_token

            routes = {"static (hub.json)": await check("hh_static_bench_token_0123456789"),
                      "static (token create)": await check(created), "OAuth access token": await check(access),
                      "refresh (rotate)": renew}
            samples: dict[str, list[float]] = {name: [] for name in routes}
            for name, fn in routes.items():  # warm up: connections, caches
                for _ in range(20):
                    await fn()
            for r in range(rounds):
                for name, fn in (routes.items() if r % 2 == 0 else reversed(list(routes.items()))):
                    n = block if "refresh" not in name else max(5, block // 10)
                    for _ in range(n):
                        t0 = time.perf_counter()
                        await fn()
                        samples[name].append(time.perf_counter() - t0)
    figures = {name: _ms(s) for name, s in samples.items()}
    base = figures["static (token create)"]["p50_ms"]
    print("\noauth_tokens: cost of one token check (in-process, SQLite)")
    print(f"{'route':<24}{'p50 ms':>10}{'p99 ms':>10}{'vs static':>11}")
    for name, f in figures.items():
        print(f"{name:<24}{f['p50_ms']:>10.3f}{f['p99_ms']:>10.3f}{f['p50_ms'] / base:>10.2f}x")
    oauth = figures["OAuth access token"]["p50_ms"]
    verdict = "PASS" if oauth < TARGET_MS else "MISS"
    print(f"{verdict}: OAuth access-token check p50 {oauth:.3f} ms (target < {TARGET_MS} ms)")
    result = {"figures": figures, "target_ms": TARGET_MS, "verdict": verdict}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "oauth_tokens.json").write_text(json.dumps(result, indent=2))
    return result


def main() -> None:
    run_alone("oauth_tokens", run, __doc__)


if __name__ == "__main__":
    main()

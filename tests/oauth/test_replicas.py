"""Two replicas on one PostgreSQL database are one authorization server: a sign-in made through one
works on the other, `hermes-hub token list` shows it with its client's name, and `token revoke` ends
it on both."""

from __future__ import annotations

import json
import sys

import anyio
import httpx2
import pytest

from tests.oauth.flow import Raw, hub_config
from tests.postgres import new_database
from tests.support import PROJECT, serve_process

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def cli(config: str, *args: str) -> str:
    done = await anyio.run_process([sys.executable, "-m", "hermes_hub", *args, "--config", config], cwd=PROJECT,
                                   check=False)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode()


async def test_a_sign_in_on_one_replica_works_on_the_other_and_revoking_it_ends_it_on_both(pg_server, tmp_path):
    config = hub_config(storage={"url": await new_database(pg_server)})
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    async with serve_process(config, tmp_path / "a") as a, serve_process(config, tmp_path / "b") as b, \
            httpx2.AsyncClient(timeout=10) as http:
        on_a = Raw(http, a.url)
        await on_a.register("Claude Desktop")
        asked = await on_a.authorize()  # answered on the other replica: its consent page, its token endpoint
        consent_on_b = asked.headers["location"].replace(a.url.removesuffix("/mcp"), b.url.removesuffix("/mcp"))
        code = (await on_a.consent(consent_on_b)).headers["location"].split("code=")[1].split("&")[0]
        on_b = Raw(http, b.url)
        on_b.client_id, on_b.verifier = on_a.client_id, on_a.verifier
        tokens = (await on_b.exchange(code)).json()
        assert await on_a.status(tokens["access_token"], b.url) == 200
        listed = json.loads(await cli(str(a.config), "token", "list", "--json"))
        grant = next(t for t in listed if t.get("kind") == "oauth")
        assert grant["user"] == "alice" and grant["name"] == "OAuth: Claude Desktop (/mcp)" and grant["revoked_at"] is None
        assert "OAuth: Claude Desktop (/mcp)" in await cli(str(a.config), "token", "list")
        assert "must sign in again" in await cli(str(a.config), "token", "revoke", grant["id"])
        for replica in (a, b):
            assert await on_a.status(tokens["access_token"], replica.url) == 401
        refreshed = await on_a.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"])
        assert refreshed.status_code == 400

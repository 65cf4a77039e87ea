"""An OAuth sign-in stands only while its person does (issue 30, item 1). Attacks on a served hub whose
hub tokens were made with the real `hermes-hub token create` in its real SQLite store: the hub token
that approved a sign-in is revoked (`hermes-hub token revoke`), its admin is demoted, it is taken out of
hub.json, or the sign-in is older than `auth.grant_lifetime_days`."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from hermes_hub.infra.storage import open_store
from tests.oauth.flow import CALLBACK, Raw
from tests.postgres import new_database
from tests.standing import CARD, cli, token, tokens_before_start
from tests.support import Served, as_user, serve_process, toy, until

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def config(**auth: Any) -> dict[str, Any]:
    """A toy server anyone may use, and ``vault``, a server only admins may."""
    return {"mcpServers": {"alpha": toy("--name", "alpha"), "vault": {**toy("--name", "vault"), "roles": ["admin"]}},
            "memory": {"embedder": "none"}, "auth": auth}


async def vault_call(served: Served, bearer: str) -> tuple[bool, str]:
    """(whether it failed, its text or error) of ``vault_echo`` called with ``bearer``."""
    async with as_user(served.url, bearer) as host:
        try:
            result = await host.call_tool("vault_echo", {"text": CARD})
        except MCPError as e:
            return True, str(e)
    return result.is_error, result.content[0].text


async def registered(http: httpx2.AsyncClient, served: Served) -> Raw:
    """A host registered as a public client that may ask for both scopes, ``mcp`` and ``admin``."""
    flow = Raw(http, served.url)
    answer = await http.post(f"{flow.base}/register", json={
        "client_name": "Claude", "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none",
        "scope": "mcp admin", "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]})
    assert answer.status_code == 201, answer.text
    flow.client_id = answer.json()["client_id"]
    return flow


async def refresh(flow: Raw, refresh_token: str) -> httpx2.Response:
    return await flow.token(grant_type="refresh_token", refresh_token=refresh_token)


async def signed_in(flow: Raw, hub_token: str, scope: str = "mcp") -> dict[str, Any]:
    """The tokens of a sign-in approved on the consent page with ``hub_token``, asking for ``scope``."""
    asked = await flow.authorize(scope=scope)
    assert asked.status_code == 302, asked.text
    answered = await flow.consent(asked.headers["location"], token=hub_token)
    assert answered.status_code == 303, answered.text
    code = answered.headers["location"].split("code=")[1].split("&")[0]
    got = await flow.exchange(code)
    assert got.status_code == 200, got.text
    return got.json()


async def test_revoking_the_hub_token_that_approved_a_sign_in_ends_it_and_its_refresh_and_none_left_shuts_all(
        tmp_path):
    cfg = config()
    made = await tokens_before_start(tmp_path, cfg, ("root", "admin"), ("alice", "user"))
    (root, root_id), (alice, alice_id) = made["root"], made["alice"]
    async with serve_process(cfg, tmp_path) as served, httpx2.AsyncClient(timeout=30) as http:
        flow = await registered(http, served)
        hers = await signed_in(flow, root, "mcp admin")
        assert hers["scope"] == "mcp admin"
        assert await vault_call(served, hers["access_token"]) == (False, CARD)
        theirs = await signed_in(flow, alice)

        await cli(served.config, "token", "revoke", root_id)
        assert await flow.status(root) == 401
        refused = await http.post(served.url, json={}, headers={"Authorization": f"Bearer {hers['access_token']}"})
        assert refused.status_code == 401
        assert refused.json()["error_description"].startswith(
            "this sign-in ended: root has no live hub token any more (revoked, or taken out of hub.json)")
        renewed = await refresh(flow, hers["refresh_token"])
        assert renewed.status_code == 400 and renewed.json()["error"] == "invalid_grant"
        assert "root has no live hub token any more" in renewed.json()["error_description"]
        assert await flow.status(hers["access_token"]) == 401  # refusing the refresh issued nothing

        # What held still holds: alice's hub token and her own sign-in, which refreshes.
        assert await flow.status(alice) == 200 and await flow.status(theirs["access_token"]) == 200
        again = await refresh(flow, theirs["refresh_token"])
        assert again.status_code == 200, again.text
        assert await flow.status(again.json()["access_token"]) == 200

        await cli(served.config, "token", "revoke", alice_id)  # no hub token left: no OAuth host gets in
        assert await flow.status(again.json()["access_token"]) == 401
        late = await refresh(flow, again.json()["refresh_token"])
        assert late.status_code == 400 and "alice has no live hub token any more" in late.json()["error_description"]
        assert await flow.status(alice) == 401  # (one more wrong token from here and the address waits: 429)
    listed = json.loads(await cli(tmp_path / "hub.json", "token", "list", "--json"))
    assert {g["user"] for g in listed if g.get("kind") == "oauth"} == {"root", "alice"}  # kept, for the record


async def test_a_demoted_admin_s_sign_in_loses_admin_on_the_next_call_and_its_refresh_asks_for_none(tmp_path):
    cfg = config()
    made = await tokens_before_start(tmp_path, cfg, ("root", "admin"), ("alice", "user"))
    async with serve_process(cfg, tmp_path) as served, httpx2.AsyncClient(timeout=30) as http:
        flow = await registered(http, served)
        hers = await signed_in(flow, made["root"][0], "mcp admin")
        assert await vault_call(served, hers["access_token"]) == (False, CARD)

        user_token, _ = await token(served.config, "root", "user")  # re-created as a plain user
        await cli(served.config, "token", "revoke", made["root"][1])
        failed, said = await vault_call(served, hers["access_token"])
        assert failed and said == ("unknown tool 'vault_echo'; call tools/list for the current names (each is "
                                   "prefixed by its server)")
        async with as_user(served.url, hers["access_token"]) as host:  # still signed in, as a plain user
            assert (await host.call_tool("alpha_echo", {"text": "hi"})).content[0].text == "hi"
            names = {t.name for t in (await host.list_tools()).tools}
        assert "alpha_echo" in names and not any(n.startswith("vault_") for n in names)
        renewed = await refresh(flow, hers["refresh_token"])
        assert renewed.status_code == 200, renewed.text
        assert renewed.json()["scope"] == "mcp"
        failed, said = await vault_call(served, renewed.json()["access_token"])
        assert failed and CARD not in said
        assert await vault_call(served, user_token) == (failed, said)  # the same as her own hub token


async def test_a_sign_in_ends_grant_lifetime_days_after_its_consent_however_often_it_was_refreshed(tmp_path):
    cfg = config(grant_lifetime_days=2)
    made = await tokens_before_start(tmp_path, cfg, ("alice", "user"))
    async with serve_process(cfg, tmp_path) as served, httpx2.AsyncClient(timeout=30) as http:
        flow = await registered(http, served)
        tokens = await signed_in(flow, made["alice"][0])
        async with open_store() as store:  # the served hub's own database: the consent a day and 23 hours ago
            await store.raw("UPDATE oauth_grants SET created_at = created_at - 169200", write=True)
        renewed = await refresh(flow, tokens["refresh_token"])  # an hour left: it refreshes, for that hour only
        assert renewed.status_code == 200, renewed.text
        assert renewed.json()["expires_in"] <= 3600
        async with open_store() as store:
            rows = await store.raw("SELECT g.created_at, max(t.expires_at) FROM oauth_grants g JOIN oauth_tokens t "
                                   "ON t.grant_id = g.id WHERE t.kind = 'refresh' AND t.used_at IS NULL GROUP BY g.id")
            assert rows[0][1] <= rows[0][0] + 2 * 86400 + 1  # the new refresh token does not outlive the sign-in
            await store.raw("UPDATE oauth_grants SET created_at = created_at - 3600", write=True)  # two days on
        fresh = renewed.json()
        ended = await http.post(served.url, json={}, headers={"Authorization": f"Bearer {fresh['access_token']}"})
        assert ended.status_code == 401
        assert ended.json()["error_description"].startswith(
            "this sign-in ended: sign-ins last 2 days from the consent (auth.grant_lifetime_days), however often "
            "they are refreshed; sign in again from your MCP host")
        late = await refresh(flow, fresh["refresh_token"])
        assert late.status_code == 400 and "sign-ins last 2 days from the consent" in late.json()["error_description"]
        assert await flow.status(made["alice"][0]) == 200  # her hub token is not a sign-in: it holds
        again = await signed_in(flow, made["alice"][0])  # and she may sign in again
        assert await flow.status(again["access_token"]) == 200


async def test_a_token_taken_out_of_hub_json_ends_its_user_s_sign_ins_on_reload(tmp_path):
    carol = "carol-token-0123456789abcdef"
    cfg = config(tokens=[{"token": carol, "user": "carol"}, {"token": "dave-token-0123456789abcdef", "user": "dave"}])
    async with serve_process(cfg, tmp_path) as served, httpx2.AsyncClient(timeout=30) as http:
        flow = await registered(http, served)
        tokens = await signed_in(flow, carol)
        assert await flow.status(tokens["access_token"]) == 200
        served.config.write_text(json.dumps(config(tokens=cfg["auth"]["tokens"][1:])))

        async def out() -> bool:
            return await flow.status(carol) == 401

        await until(out, timeout=30)
        assert await flow.status(tokens["access_token"]) == 401
        renewed = await refresh(flow, tokens["refresh_token"])
        assert renewed.status_code == 400
        assert "carol has no live hub token any more" in renewed.json()["error_description"]
        assert await flow.status("dave-token-0123456789abcdef") == 200


async def test_on_postgresql_too_a_revoked_hub_token_ends_the_sign_in_it_approved(pg_server, tmp_path):
    cfg = {**config(), "storage": {"url": await new_database(pg_server)}}
    made = await tokens_before_start(tmp_path, cfg, ("root", "admin"), ("alice", "user"))
    async with serve_process(cfg, tmp_path) as served, httpx2.AsyncClient(timeout=30) as http:
        flow = await registered(http, served)
        hers = await signed_in(flow, made["root"][0], "mcp admin")
        assert await vault_call(served, hers["access_token"]) == (False, CARD)
        await cli(served.config, "token", "revoke", made["root"][1])
        assert await flow.status(hers["access_token"]) == 401
        renewed = await refresh(flow, hers["refresh_token"])
        assert renewed.status_code == 400
        assert "root has no live hub token any more" in renewed.json()["error_description"]
        assert await flow.status(made["alice"][0]) == 200

"""Issue 32, item 2: a hub that needs no sign-in advertises no OAuth. Codex takes any OAuth metadata as
"sign in here" and starts a sign-in that can never finish on a loopback hub without tokens. Such a hub
answers every OAuth URL 404 saying why (logged once at start), its 401 for a wrong token names no
resource metadata, and it still serves /mcp as the local user; a hub with tokens serves OAuth as before."""

from __future__ import annotations

import httpx2
import pytest

from hermes_hub.infra.storage import open_store
from hermes_hub.infra.storage.records import utcnow
from tests.oauth.flow import CALLBACK, HANDSHAKE, TOKENS, hub_config
from tests.support import serve_process, toy

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
METADATA = ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource/mcp/work", "/.well-known/oauth-authorization-server",
            "/.well-known/openid-configuration"]
CLIENT = {"client_name": "Codex", "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none",
          "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]}
OFF = "OAuth sign-in is off: this hub needs no authentication"


async def test_a_hub_without_tokens_serves_no_oauth_says_why_once_and_still_serves_the_local_user(tmp_path):
    config = {"mcpServers": {"alpha": toy("--name", "alpha")}, "memory": {"embedder": "none"},
              "toolsets": {"work": {"servers": ["alpha"]}}}
    async with serve_process(config, tmp_path) as served, httpx2.AsyncClient(timeout=20) as http:
        base = served.url.removesuffix("/mcp")
        answers = {path: await http.get(base + path) for path in METADATA}
        answers["/register"] = await http.post(f"{base}/register", json=CLIENT)
        answers["/authorize"] = await http.get(f"{base}/authorize", params={
            "client_id": "x", "redirect_uri": CALLBACK, "response_type": "code", "code_challenge": "c" * 43,
            "code_challenge_method": "S256"})
        answers["/token"] = await http.post(f"{base}/token", data={"grant_type": "authorization_code", "code": "x"})
        answers["/revoke"] = await http.post(f"{base}/revoke", data={"token": "x", "client_id": "x"})
        answers["/status/authorize/x"] = await http.get(f"{base}/status/authorize/abc")
        answers["consent POST"] = await http.post(f"{base}/status/authorize/abc", data={"decision": "approve"})
        wrong = await http.post(served.url, json=HANDSHAKE, headers={**HEADERS, "Authorization": "Bearer wrong-one"})
        local = await http.post(served.url, json=HANDSHAKE, headers=HEADERS)  # what held still holds
        async with open_store() as store:  # the served hub's own database
            kept = await store.oauth_counts(at=utcnow())
    assert {path: r.status_code for path, r in answers.items()} == dict.fromkeys(answers, 404)
    for path, answer in answers.items():
        assert answer.json()["error_description"].startswith(OFF), path
        assert "hermes-hub token create USER" in answer.json()["error_description"], path
    assert kept["clients"] == 0 and kept["requests"] == 0  # nothing registered, nothing waiting for consent
    assert wrong.status_code == 401 and "resource_metadata" not in wrong.headers["www-authenticate"]
    assert "OAuth" not in wrong.json()["error_description"] and ".well-known" not in wrong.text
    assert local.status_code == 200 and "www-authenticate" not in local.headers
    log = served.log.read_text()
    assert log.count(OFF) == 1 and "authentication: off" in log


async def test_a_hub_with_tokens_still_serves_its_metadata_and_registration(tmp_path):
    async with serve_process(hub_config(), tmp_path) as served, httpx2.AsyncClient(timeout=20) as http:
        base = served.url.removesuffix("/mcp")
        metadata = {path: await http.get(base + path) for path in METADATA[:4]}
        registered = await http.post(f"{base}/register", json=CLIENT)
        missing = await http.post(served.url, json=HANDSHAKE, headers=HEADERS)
        signed = await http.post(served.url, json=HANDSHAKE, headers={**HEADERS,
                                                                       "Authorization": f"Bearer {TOKENS['alice']}"})
    assert {path: r.status_code for path, r in metadata.items()} == dict.fromkeys(metadata, 200)
    assert metadata["/.well-known/oauth-authorization-server"].json()["registration_endpoint"] == f"{base}/register"
    assert registered.status_code == 201 and registered.json()["client_id"]
    assert missing.status_code == 401
    assert f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"' in missing.headers["www-authenticate"]
    assert signed.status_code == 200
    assert OFF not in served.log.read_text() and "authentication: required" in served.log.read_text()

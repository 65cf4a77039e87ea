"""With ``auth.issuer`` and ``auth.audience`` the hub takes an identity provider's JWT access tokens,
checked against its JWKS, and maps ``auth.user_claim`` to the hub user; hub tokens keep working."""

from __future__ import annotations

import time

import httpx2
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from hermes_hub.infra.storage import open_store
from tests.agent.vendors import serve_app
from tests.oauth.flow import HANDSHAKE, TOKENS, hub_config
from tests.oauth.idp import TestIdP
from tests.support import as_user, serve_process

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
async def idp_hub(tmp_path):
    idp = TestIdP()
    async with serve_app(idp.app()) as base:
        idp.base = base.removesuffix("/v1")
        config = hub_config(auth={**hub_config()["auth"], "issuer": idp.base, "audience": "hermes-hub",
                                  "user_claim": "email"})
        async with serve_process(config, tmp_path) as served, httpx2.AsyncClient(timeout=10) as http:
            yield idp, served, http


async def status(http, url: str, token: str) -> httpx2.Response:
    return await http.post(url, json=HANDSHAKE, headers={"Authorization": f"Bearer {token}",
                                                         "Accept": "application/json, text/event-stream"})


async def test_a_valid_jwt_opens_the_hub_as_the_user_its_email_claim_names(idp_hub):
    idp, served, http = idp_hub
    async with as_user(served.url, idp.token()) as host:
        assert not (await host.call_tool("hermes_session_create", {"title": "from the idp"})).is_error
    async with open_store() as store:
        assert [s.title for s in await store.list_sessions("ana@example.com", limit=5)] == ["from the idp"]
    assert (await status(http, served.url, TOKENS["alice"])).status_code == 200  # hub tokens still work


async def test_the_protected_resource_metadata_names_the_identity_provider(idp_hub):
    idp, served, http = idp_hub
    base = served.url.removesuffix("/mcp")
    metadata = (await http.get(f"{base}/.well-known/oauth-protected-resource/mcp")).json()
    assert metadata["authorization_servers"] == [idp.base] and metadata["resource"] == served.url
    assert (await http.get(f"{base}/.well-known/oauth-authorization-server")).status_code == 404


@pytest.mark.parametrize("claims, why", [
    ({"aud": "another-app"}, "the JWT was issued for another audience, not 'hermes-hub' (auth.audience)"),
    ({"exp": int(time.time()) - 120}, "the JWT has expired; get a new one from your identity provider"),
    ({"iss": "https://other-idp.example"}, "the JWT was refused: Invalid issuer"),
    ({"email": None}, "the JWT carries no 'email' claim (auth.user_claim) to name the hub user"),
])
async def test_a_jwt_that_does_not_fit_is_refused_saying_why(idp_hub, claims, why):
    idp, served, http = idp_hub
    refused = await status(http, served.url, idp.token(**claims))
    assert refused.status_code == 401
    assert refused.json()["error_description"].startswith(why)


async def test_a_jwt_signed_by_a_key_the_idp_never_published_is_refused(idp_hub):
    idp, served, http = idp_hub
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    refused = await status(http, served.url, idp.token(kid="key-1", key=stranger))
    assert refused.status_code == 401 and "Signature verification failed" in refused.json()["error_description"]
    made_up = await status(http, served.url, idp.token(kid="key-99", key=stranger))
    assert "signing key is not one of" in made_up.json()["error_description"]


async def test_a_rotated_key_is_picked_up_at_once_and_made_up_key_ids_cost_one_fetch(idp_hub):
    idp, served, http = idp_hub
    assert (await status(http, served.url, idp.token())).status_code == 200
    fetched = idp.jwks_fetches
    assert (await status(http, served.url, idp.token(kid=idp.rotate()))).status_code == 200
    assert idp.jwks_fetches == fetched + 1
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    for n in range(5):
        assert (await status(http, served.url, idp.token(kid=f"made-up-{n}", key=stranger))).status_code == 401
    assert idp.jwks_fetches <= fetched + 2

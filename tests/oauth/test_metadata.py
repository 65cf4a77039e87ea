"""What a host discovers: the protected-resource metadata of each endpoint, the authorization server's
metadata, and the 401 that points at them; ``hub.public_url`` names every URL behind a reverse proxy."""

from __future__ import annotations

import httpx2
import pytest

from hermes_hub.infra.config import parse_config
from hermes_hub.protocol.upstream.exposure import Exposure
from tests.oauth.flow import HANDSHAKE, hub_config
from tests.support import serve_process

pytestmark = pytest.mark.anyio


@pytest.mark.slow
async def test_behind_a_proxy_public_url_is_the_issuer_and_starts_every_url_the_metadata_names(tmp_path):
    config = hub_config(hub={"public_url": "https://hub.example"})
    async with serve_process(config, tmp_path) as served, httpx2.AsyncClient(timeout=10) as http:
        base = served.url.removesuffix("/mcp")
        server = (await http.get(f"{base}/.well-known/oauth-authorization-server")).json()
        assert server["issuer"] == "https://hub.example"
        assert server["authorization_endpoint"] == "https://hub.example/authorize"
        assert server["token_endpoint"] == "https://hub.example/token"
        assert server["registration_endpoint"] == "https://hub.example/register"
        assert server["revocation_endpoint"] == "https://hub.example/revoke"
        assert server["code_challenge_methods_supported"] == ["S256"]
        assert server["grant_types_supported"] == ["authorization_code", "refresh_token"]
        for suffix, resource in [("", "/mcp"), ("/mcp", "/mcp"), ("/mcp/work", "/mcp/work")]:
            found = (await http.get(f"{base}/.well-known/oauth-protected-resource{suffix}")).json()
            assert found["resource"] == "https://hub.example" + resource
            assert found["authorization_servers"] == ["https://hub.example"]
        refused = await http.post(served.url + "/work", json=HANDSHAKE,
                                  headers={"Accept": "application/json, text/event-stream"})
        assert refused.status_code == 401
        assert ('resource_metadata="https://hub.example/.well-known/oauth-protected-resource/mcp/work"'
                in refused.headers["www-authenticate"])


@pytest.mark.slow
async def test_without_public_url_the_metadata_names_the_origin_the_host_used(tmp_path):
    async with serve_process(hub_config(), tmp_path) as served, httpx2.AsyncClient(timeout=10) as http:
        base = served.url.removesuffix("/mcp")
        server = (await http.get(f"{base}/.well-known/oauth-authorization-server")).json()
        assert server["issuer"] == base and server["client_id_metadata_document_supported"] is True
        assert server["scopes_supported"] == ["mcp", "admin"]


def test_an_identity_provider_makes_tokens_required_and_lets_a_hub_without_tokens_listen_wide():
    config = parse_config({"mcpServers": {}, "auth": {"issuer": "https://idp.example", "audience": "hub"}}, env={})
    loopback = Exposure.decide(config, "127.0.0.1", has_tokens=False)
    assert loopback.required and "auth.issuer names an identity provider" in loopback.reason
    assert Exposure.decide(config, "0.0.0.0", has_tokens=False).refusal() is None


def test_issuer_without_audience_and_a_public_url_with_a_path_are_errors_that_say_what_to_write():
    with pytest.raises(Exception, match="auth.issuer and auth.audience go together"):
        parse_config({"mcpServers": {}, "auth": {"issuer": "https://idp.example"}}, env={})
    with pytest.raises(Exception, match="must be an origin only, e.g. 'https://hub.example'"):
        parse_config({"mcpServers": {}, "hub": {"public_url": "https://hub.example/hermes"}}, env={})

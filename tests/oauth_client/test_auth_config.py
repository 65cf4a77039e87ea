"""`mcpServers.NAME.auth`: every key optional, mistakes named with their fix."""

from __future__ import annotations

import pytest

from hermes_hub.infra.config import parse_config
from hermes_hub.downstream.oauth import client_metadata, preregistered, signs_in, with_scopes
from hermes_hub.infra.errors import ConfigError


def server(**entry):  # type: ignore[no-untyped-def]
    return parse_config({"mcpServers": {"s": entry}}, env={}).mcp_servers["s"]


def test_a_remote_server_signs_in_by_discovery_unless_a_static_authorization_header_is_its_credential():
    assert signs_in(server(url="https://a.example/mcp"))
    assert not signs_in(server(url="https://a.example/mcp", headers={"Authorization": "Bearer x"}))
    assert signs_in(server(url="https://a.example/mcp", headers={"authorization": "Bearer x"}, auth={}))
    assert not signs_in(server(command="true"))


def test_a_pre_registered_client_uses_its_secret_at_the_token_endpoint_and_scopes_are_asked_for():
    cfg = server(url="https://a.example/mcp", auth={"client_id": "hub", "client_secret": "s3", "scopes": ["r", "w"]})
    client = preregistered(cfg, "http://127.0.0.1:5/callback")
    assert client and client.client_id == "hub" and client.token_endpoint_auth_method == "client_secret_basic"
    assert client_metadata(cfg, "http://127.0.0.1:5/callback").scope == "r w"
    assert "s3" not in repr(cfg)
    assert preregistered(server(url="https://a.example/mcp"), "http://x/cb") is None


def test_the_authorization_url_asks_for_configured_and_step_up_scopes_beside_the_servers_own():
    url = "https://as.example/authorize?client_id=c&scope=read&state=s"
    assert with_scopes(url, "read write", None).endswith("state=s&scope=read+write")
    assert with_scopes(url, None, None) == url


@pytest.mark.parametrize("entry, words", [
    ({"command": "true", "auth": {}}, "'auth' (OAuth) applies to a remote server"),
    ({"url": "https://a.example/mcp", "auth": {"client_metadata_url": "http://a.example/c.json"}}, "https URL"),
    ({"url": "https://a.example/mcp", "auth": {"type": "basic"}}, "oauth"),
    ({"url": "https://a.example/mcp", "auth": {"client": "x"}}, "client"),
])
def test_a_wrong_auth_entry_is_an_error_that_says_what_to_write(entry, words):
    with pytest.raises(ConfigError) as e:
        parse_config({"mcpServers": {"s": entry}}, env={})
    assert words in str(e.value) and "mcpServers.s" in str(e.value)

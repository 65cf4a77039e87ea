"""A client whose ``client_id`` is the URL of its metadata document (CIMD) needs no registration: the hub
reads the document (http only on loopback), shows its name on the consent page, and issues it tokens."""

from __future__ import annotations

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from hermes_hub.protocol.authorization.clients import is_metadata_url
from tests.agent.vendors import serve_app
from tests.oauth.flow import CALLBACK, Raw, hub_config
from tests.support import serve_process

pytestmark = pytest.mark.anyio


def documents(base: list[str]) -> Starlette:
    async def good(request: Request) -> JSONResponse:
        return JSONResponse({"client_id": f"{base[0]}/good.json", "client_name": "Metadata Host",
                             "redirect_uris": [CALLBACK], "grant_types": ["authorization_code", "refresh_token"],
                             "response_types": ["code"], "token_endpoint_auth_method": "none"})

    async def impostor(request: Request) -> JSONResponse:
        return JSONResponse({"client_id": "https://someone-else.example/client.json", "redirect_uris": [CALLBACK]})

    return Starlette(routes=[Route("/good.json", good), Route("/impostor.json", impostor)])


def test_only_https_or_loopback_http_urls_with_a_path_are_metadata_documents():
    assert is_metadata_url("https://app.example/oauth/client.json")
    assert is_metadata_url("http://127.0.0.1:8123/client.json")
    assert not is_metadata_url("http://app.example/client.json")
    assert not is_metadata_url("https://app.example/")
    assert not is_metadata_url("3f2a-uuid-like-id")


@pytest.mark.slow
async def test_a_client_named_by_its_metadata_document_signs_in_without_registering(tmp_path):
    base: list[str] = []
    config = hub_config()
    config["auth"]["client_metadata_private"] = True  # the documents are served on loopback
    async with serve_app(documents(base)) as url, serve_process(config, tmp_path) as served, \
            httpx2.AsyncClient(timeout=10) as http:
        base.append(url.removesuffix("/v1"))
        flow = Raw(http, served.url)
        flow.client_id = f"{base[0]}/good.json"
        metadata = (await http.get(served.url.removesuffix("/mcp") + "/.well-known/oauth-authorization-server")).json()
        assert metadata["client_id_metadata_document_supported"] is True
        asked = await flow.authorize()
        assert asked.status_code == 302, asked.text
        page = await http.get(asked.headers["location"])
        assert "Metadata Host" in page.text
        tokens = await flow.tokens()
        assert await flow.status(tokens["access_token"]) == 200

        flow.client_id = f"{base[0]}/impostor.json"
        refused = await flow.authorize()
        assert refused.status_code == 400 and "not found" in refused.json()["error_description"]
        assert "its client_id is not its own URL" in served.log.read_text()

"""The MCP Python SDK's own OAuth client signs in to a served hub: discovery from the 401, dynamic
registration, the consent page in a real Chromium, PKCE, and tokens bound to the endpoint asked for."""

from __future__ import annotations

import httpx2
import pytest

from tests.oauth.flow import TOKENS, Consent, Memory, hub_config, sdk_client, signed_in
from tests.support import as_user, serve_process
from tests.web.pages import browser

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_the_sdk_client_signs_in_through_the_consent_page_and_acts_as_that_hub_user(tmp_path):
    async with serve_process(hub_config(), tmp_path) as served, browser() as chromium:
        consent = Consent(chromium)
        async with signed_in(served.url, sdk_client(served.url, consent, name="Test Host")) as host:
            created = await host.call_tool("hermes_session_create", {"title": "signed in by oauth"})
            assert not created.is_error, created.content
        assert "Test Host" in consent.page_text and "http://127.0.0.1:9/callback" in consent.page_text
        assert f"{served.url}" in consent.page_text and "mcp" in consent.page_text
        async with as_user(served.url, TOKENS["alice"]) as alice:
            listed = await alice.call_tool("hermes_session_list", {})
        assert "signed in by oauth" in listed.content[0].text


async def test_a_token_for_a_toolset_does_not_open_the_whole_hub(tmp_path):
    async with serve_process(hub_config(), tmp_path) as served, browser() as chromium:
        storage = Memory()
        work = served.url + "/work"
        async with signed_in(work, sdk_client(work, Consent(chromium), storage)) as host:
            assert "alpha_echo" in {t.name for t in (await host.list_tools()).tools}
        assert storage.tokens is not None
        async with httpx2.AsyncClient(timeout=10) as http:
            refused = await http.post(served.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                      headers={"Authorization": f"Bearer {storage.tokens.access_token}",
                                               "Accept": "application/json, text/event-stream"})
        assert refused.status_code == 401
        assert "issued for /mcp/work, not /mcp" in refused.json()["error_description"]
        assert 'resource_metadata="' + served.url.removesuffix("/mcp") + '/.well-known/oauth-protected-resource/mcp"' \
            in refused.headers["www-authenticate"]


async def test_a_person_logged_in_to_the_status_page_approves_without_typing_a_token(tmp_path):
    async with serve_process(hub_config(), tmp_path) as served, browser() as chromium:
        context = await chromium.new_context()  # one browser profile: the status page's cookie carries over
        page = await context.new_page()
        await page.goto(served.url.removesuffix("/mcp") + "/status")
        await page.fill("#token", TOKENS["root"])
        await page.click("button[type=submit]")
        await page.wait_for_url("**/status")
        consent = Consent(context, token=None)
        async with signed_in(served.url, sdk_client(served.url, consent)) as host:
            assert (await host.list_tools()).tools
        assert "Signed in as root" in consent.page_text

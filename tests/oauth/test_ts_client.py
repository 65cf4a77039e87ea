"""The TypeScript MCP SDK's client OAuth (run with node) signs in to a served hub too: discovery from
the 401, registration, PKCE, the consent page (filled in Chromium), tokens, then a tool listing."""

from __future__ import annotations

import shutil
from urllib.parse import parse_qs, urlsplit

import anyio
from anyio.streams.buffered import BufferedByteReceiveStream
import pytest

from tests.oauth.flow import CALLBACK, TOKENS, hub_config
from tests.support import PROJECT, serve_process
from tests.web.pages import browser

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
MODULES = PROJECT / "interop" / "node_modules"
SECONDS = 10_000


async def test_the_typescript_sdk_client_signs_in_and_lists_the_tools(tmp_path):
    node = shutil.which("node")
    if node is None or not (MODULES / "@modelcontextprotocol" / "sdk").exists():
        pytest.skip("node or interop/node_modules is missing: run `bash interop/install.sh`")
    async with serve_process(hub_config(), tmp_path) as served, browser() as chromium, \
            await anyio.open_process([node, str(PROJECT / "tests" / "oauth" / "ts_client.mjs"), served.url, CALLBACK],
                                     env={"NODE_PATH": str(MODULES), "PATH": "/usr/bin:/bin"}) as proc:
        out = BufferedByteReceiveStream(proc.stdout)

        async def line() -> str:
            return (await out.receive_until(b"\n", 65536)).decode()

        with anyio.fail_after(60):
            first = await line()
            assert first.startswith("AUTHORIZE "), first
            page = await chromium.new_page()
            await page.route(CALLBACK + "*", lambda route: route.fulfill(status=200, body="ok"))
            await page.goto(first.removeprefix("AUTHORIZE "))
            assert "TS Host" in await page.locator("#client-name").inner_text()
            await page.fill("#token", TOKENS["alice"])
            async with page.expect_request(lambda r: r.url.startswith(CALLBACK), timeout=SECONDS) as caught:
                await page.click("#approve")
            code = parse_qs(urlsplit((await caught.value).url).query)["code"][0]
            await proc.stdin.send((code + "\n").encode())
            rest = [await line(), await line()]
        assert any(line.startswith("TOOLS ") and "alpha_echo" in line for line in rest), rest
        assert "TOKEN hha_" in rest

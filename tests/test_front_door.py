"""The served hub's front door: ``/`` leads to the status page, the serve log's first lines say where the
hub is and how to add it to a host, and health pings between hubs over HTTP log nothing at INFO."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx2
import pytest
from anyio.abc import SocketStream

from tests.support import free_port, serve_process, toy, until
from tests.web.pages import TOKENS, base_url, hub_config

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.mark.parametrize("tokens", [False, True])
async def test_the_root_leads_to_the_status_page_and_its_own_login_still_applies(tmp_path, tokens):
    async with serve_process(hub_config(tokens=tokens), tmp_path) as served:
        url = base_url(served.url)
        async with httpx2.AsyncClient(timeout=10) as http:
            first = await http.get(f"{url}/")
            head = await http.head(f"{url}/")
            page = await http.get(f"{url}/", follow_redirects=True)
            mcp = await http.get(served.url)  # /mcp is still the MCP endpoint, not the page
    assert first.status_code in (302, 307) and first.headers["location"] == "/status"
    assert head.status_code == first.status_code and head.headers["location"] == "/status"
    assert page.url.path == "/status" and "text/html" in page.headers["content-type"]
    assert "<title>hermes-hub" in page.text
    if tokens:  # the page asks for a token and shows nothing of the hub before it
        assert 'name="token"' in page.text and "alpha" not in page.text
        assert not any(t in page.text for t in TOKENS.values())
    else:
        assert "alpha" in page.text and "beta" in page.text
    assert mcp.status_code != 200 or "text/html" not in mcp.headers.get("content-type", "")


async def test_the_serve_log_starts_with_the_mcp_url_the_status_url_and_the_install_command(tmp_path):
    async with serve_process({"mcpServers": {"local": toy()}}, tmp_path) as served:
        url = base_url(served.url)
        first = served.log.read_text().splitlines()[:5]
    text = "\n".join(first)
    assert f"{url}/mcp" in text, text
    assert f"status page: {url}/status" in text, text
    assert f"hermes-hub install claude-code --config {served.config}" in text, text


class Counting:
    """A TCP relay in front of a served hub that counts the HTTP requests passing through it."""

    def __init__(self, target: int) -> None:
        self.target, self.requests = target, 0

    async def pipe(self, source: SocketStream, sink: SocketStream, count: bool) -> None:
        try:
            async for chunk in source:
                self.requests += chunk.count(b"POST /mcp") if count else 0
                await sink.send(chunk)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream):
            pass
        finally:
            await sink.aclose()

    async def relay(self, client: SocketStream) -> None:
        async with client, await anyio.connect_tcp("127.0.0.1", self.target) as server, \
                anyio.create_task_group() as tg:
            tg.start_soon(self.pipe, server, client, False)
            await self.pipe(client, server, True)

    @asynccontextmanager
    async def serving(self, port: int) -> AsyncIterator[None]:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=port)
        async with listener, anyio.create_task_group() as tg:
            tg.start_soon(listener.serve, self.relay)
            yield
            tg.cancel_scope.cancel()


def info_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.search(r"\bINFO\b", line)]


async def test_health_pings_over_http_log_nothing_at_info_at_either_hub(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONUNBUFFERED", "1")  # uvicorn's access log goes to stdout: unbuffered, or unseen
    (inner_dir := tmp_path / "inner").mkdir()
    (outer_dir := tmp_path / "outer").mkdir()
    async with serve_process({"mcpServers": {"local": toy()}}, inner_dir) as inner:
        counting, port = Counting(int(inner.url.rsplit(":", 1)[1].split("/")[0])), free_port()
        remote = {"type": "http", "url": f"http://127.0.0.1:{port}/mcp", "health_interval": 0.2}
        async with counting.serving(port), serve_process({"mcpServers": {"inner": remote}}, outer_dir) as outer:
            async with httpx2.AsyncClient(timeout=10) as http:
                ready = await http.get(f"{base_url(outer.url)}/readyz")
            assert {s["name"]: s["state"] for s in ready.json()["servers"]} == {"inner": "READY"}
            logs = {"inner": inner.log, "outer": outer.log}
            before = {name: len(info_lines(log.read_text())) for name, log in logs.items()}
            start = counting.requests
            await until(lambda: counting.requests >= start + 5, timeout=30)  # five pings or more, each a POST
            after = {name: info_lines(log.read_text())[before[name]:] for name, log in logs.items()}
    assert after == {"inner": [], "outer": []}

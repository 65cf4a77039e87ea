"""Files and URLs a hub may read for hermes_docs_add: only under docs.roots (directories, URL prefixes),
no redirect out of them, bounded in size and time, each refusal saying what to do."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from hermes_hub import Hub
from hermes_hub.infra.config import parse_config
from tests.support import serve_asgi

pytestmark = pytest.mark.anyio
PAGE = "<html><head><title>Trip</title></head><body><h1>Lisbon</h1><p>The hotel is on Rua Augusta.</p></body></html>"


def site(base: str) -> Starlette:
    async def page(request: Any) -> Response:
        return HTMLResponse(PAGE)

    async def slow(request: Any) -> Response:
        await anyio.Event().wait()  # never answers: docs.timeout must end the read (torn down after the test)
        return HTMLResponse(PAGE)

    return Starlette(routes=[
        Route("/docs/trip.html", page), Route("/docsevil/trip.html", page), Route("/private/trip.html", page),
        Route("/docs/in", lambda r: RedirectResponse(f"{base}/docs/trip.html", 302)),
        Route("/docs/out", lambda r: RedirectResponse(f"{base}/private/trip.html", 302)),
        Route("/docs/big", lambda r: Response(b"x" * 5000, media_type="text/plain")),
        Route("/docs/slow", slow)])


async def add(host: Client, **args: Any) -> Any:
    r = await host.call_tool("hermes_docs_add", args)
    return ("error", r.content[0].text) if r.is_error else r.structured_content


async def test_only_what_lies_under_the_roots_is_read(tmp_path):
    root = tmp_path / "notes"
    root.mkdir()
    (root / "plan.md").write_text("# Plan\n\nFly on Monday.\n")
    (tmp_path / "secret.md").write_text("# Secret\n\nnot for the hub\n")
    (root / "link.md").symlink_to(tmp_path / "secret.md")
    async with serve_asgi(site, lifespan="off") as base:
        config = parse_config({"mcpServers": {}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
                               "memory": {"embedder": "none"},
                               "docs": {"roots": ["notes", f"{base}/docs"], "max_bytes": 1000, "timeout": 1}},
                              base_dir=tmp_path)
        async with Hub(config) as hub, hub.client() as host:
            with anyio.fail_after(60):
                by_name = await add(host, path="plan.md")
                by_path = await add(host, path=str(root / "plan.md"))
                outside = await add(host, path=str(tmp_path / "secret.md"))
                escape = await add(host, path="../secret.md")
                linked = await add(host, path="link.md")
                page = await add(host, url=f"{base}/docs/trip.html")
                followed = await add(host, url=f"{base}/docs/in")
                lookalike = await add(host, url=f"{base}/docsevil/trip.html")
                redirect_out = await add(host, url=f"{base}/docs/out")
                big = await add(host, url=f"{base}/docs/big")
                slow = await add(host, url=f"{base}/docs/slow")
                listed = await host.call_tool("hermes_docs_list", {})
    assert by_name["title"] == "Plan" and by_name["origin"] == "plan.md" and by_path["format"] == "markdown"
    for refused in (outside, escape, linked):
        assert refused[0] == "error" and "outside the directories this hub may read" in refused[1]
    assert page["title"] == "Trip" and page["format"] == "html" and page["chunks"] == 1
    assert followed["origin"] == f"{base}/docs/trip.html"
    assert "not under the URL prefixes" in lookalike[1]
    assert "redirects to" in redirect_out[1] and "outside docs.roots" in redirect_out[1]
    assert "larger than docs.max_bytes (1,000 bytes)" in big[1]
    assert "took longer than docs.timeout (1 s)" in slow[1]
    assert len(listed.structured_content["documents"]) == 4  # plan twice, the page, the page by redirect


async def test_a_hub_without_roots_reads_only_text_given_inline(tmp_path):
    (tmp_path / "a.md").write_text("# A\n\ntext\n")
    config = parse_config({"mcpServers": {}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
                           "memory": {"embedder": "none"}}, base_dir=tmp_path)
    async with Hub(config) as hub, hub.client() as host:
        path = await add(host, path=str(tmp_path / "a.md"))
        url = await add(host, url="https://example.com/a.md")
        inline = await add(host, text="# A\n\ntext\n")
    assert "reads no files" in path[1] and "reads no URLs" in url[1] and "docs.roots" in url[1]
    assert inline["vectors"] == "none (word search only)"

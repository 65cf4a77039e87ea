"""Issue 30, item 4: a ``docs.roots`` URL prefix is not walked around. A plain token user asks the served hub's
``hermes_docs_add`` for a private page of a site whose public part is a root, spelled every way a server may
read as the private page (``..``, ``%2e%2E``, ``//..``, ``..;``, an encoded slash, user info), or reached
by a redirect (at once or at the third hop): each is refused with what it reads as, the site never sees a
request for the private page, and her documents hold only the public ones."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

import anyio
import httpx2
import pytest
from mcp import Client

from hermes_hub.infra.errors import InvalidInput
from hermes_hub.services.memory.addresses import Address
from tests.support import as_user, serve_asgi, served_hub

pytestmark = pytest.mark.anyio
ANA = "ana-static-token-0123456789"
PUBLIC = b"# Canteen\n\nThe canteen opens at noon."
PAYROLL = b"# Payroll\n\nBob earns 9,100 a month."


def resolve(raw: str) -> str:
    """The path as a lenient server reads it: decoded, ``;params`` cut, backslashes and ``//`` merged, dots
    resolved (nginx, Tomcat and IIS each do some of this)."""
    kept: list[str] = []
    for segment in unquote(raw).replace("\\", "/").split("/"):
        segment = segment.split(";", 1)[0]
        if segment == "..":
            kept = kept[:-1]
        elif segment not in ("", "."):
            kept.append(segment)
    return "/" + "/".join(kept)


class Site:
    """A real HTTP site with a public and a private part, and redirects; it records every path asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, base: str) -> Any:
        redirects = {"/public/in": "/public/canteen.md", "/public/out": "../private/payroll.md",
                     "/public/sneaky": "/public/%2e%2E/private/payroll.md", "/public/hop1": "/public/hop2",
                     "/public/hop2": "/public/hop3", "/public/hop3": f"{base}/public/../private/payroll.md",
                     "/public/loop": "/public/loop", "/public/slash": "/public/..%2Fprivate/payroll.md"}

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            raw = scope["raw_path"].decode()
            self.asked.append(raw)
            path = resolve(raw)
            status, headers, body = 404, [], b"not found"
            if path in redirects:
                status, headers, body = 302, [(b"location", redirects[path].encode())], b""
            elif path == "/public/canteen.md":
                status, body = 200, PUBLIC
            elif path in ("/private/payroll.md", "/public-evil/payroll.md"):
                status, body = 200, PAYROLL
            await send({"type": "http.response.start", "status": status,
                        "headers": [(b"content-type", b"text/markdown"), *headers]})
            await send({"type": "http.response.body", "body": body})

        return app


async def add(host: Client, url: str) -> Any:
    r = await host.call_tool("hermes_docs_add", {"url": url})
    return ("error", r.content[0].text) if r.is_error else r.structured_content


@pytest.mark.slow
async def test_a_plain_user_cannot_reach_past_a_url_root(tmp_path):
    site = Site()
    async with serve_asgi(site, lifespan="off") as base:
        config = {"mcpServers": {}, "memory": {"embedder": "none"}, "docs": {"roots": [f"{base}/public/"]},
                  "auth": {"tokens": [{"token": ANA, "user": "ana"}]}}
        spellings = {
            "dots": f"{base}/public/../private/payroll.md",
            "encoded dots": f"{base}/public/%2e%2E/private/payroll.md",
            "double slash": f"{base}/public//../private/payroll.md",
            "dot params": f"{base}/public/..;/private/payroll.md",
            "encoded slash": f"{base}/public/..%2Fprivate/payroll.md",
            "double-encoded dots": f"{base}/public/%252e%252e/private/payroll.md",
            "backslash": f"{base}/public/..\\private/payroll.md",
            "look-alike": f"{base}/public-evil/payroll.md",
            "user info": base.replace("http://", "http://ana@") + "/public/canteen.md",
        }
        async with httpx2.AsyncClient(timeout=10) as http:  # the site does serve payroll to these spellings
            for name in ("encoded dots", "dot params", "encoded slash", "look-alike"):
                assert (await http.get(httpx2.URL(spellings[name]))).content == PAYROLL, name
        site.asked.clear()
        async with served_hub(config, tmp_path) as url, as_user(url, ANA) as ana:
            with anyio.fail_after(60):
                refused = {name: await add(ana, u) for name, u in spellings.items()}
                redirected = {name: await add(ana, f"{base}/public/{name}")
                              for name in ("out", "sneaky", "hop1", "slash")}
                loop = await add(ana, f"{base}/public/loop")
                plain = await add(ana, f"HTTP://{base.removeprefix('http://')}/public/./canteen.md")
                followed = await add(ana, f"{base}/public/in")
                listed = (await ana.call_tool("hermes_docs_list", {})).structured_content
                recall = (await ana.call_tool("hermes_memory_recall", {"query": "payroll earns",
                                                                       "sources": ["documents"]})).structured_content
    roots = f"(docs.roots: {base}/public/)"
    assert refused["dots"] == ("error", f"{base}/public/../private/payroll.md is not under the URL prefixes this hub "
                               f"may read (it reads as {base}/private/payroll.md) {roots}")
    assert refused["encoded dots"][1].endswith(f"(it reads as {base}/private/payroll.md) {roots}")
    assert refused["double slash"][1].endswith(f"(it reads as {base}/private/payroll.md) {roots}")
    assert "dot segment with parameters (..;)" in refused["dot params"][1]
    assert "holds an encoded slash" in refused["encoded slash"][1]
    assert "double-encoded dot" in refused["double-encoded dots"][1]
    assert "holds a backslash" in refused["backslash"][1]
    assert refused["look-alike"] == ("error", f"{base}/public-evil/payroll.md is not under the URL prefixes this hub "
                                     f"may read {roots}")
    assert "holds user info" in refused["user info"][1]
    final = "add the document by its final URL if that one is under them"
    assert redirected["out"] == ("error", f"{base}/public/out redirects to {base}/private/payroll.md, outside "
                                 f"docs.roots ({base}/public/); {final}")
    assert redirected["sneaky"] == ("error", f"{base}/public/sneaky redirects to {base}/public/%2e%2E/private/"
                                    f"payroll.md (it reads as {base}/private/payroll.md), outside docs.roots "
                                    f"({base}/public/); {final}")
    assert redirected["hop1"] == ("error", f"{base}/public/hop3 redirects to {base}/public/../private/payroll.md (it "
                                  f"reads as {base}/private/payroll.md), outside docs.roots ({base}/public/); {final}")
    assert redirected["slash"] == ("error", f"{base}/public/slash redirects to an address the hub will not follow: "
                                   f"{base}/public/..%2Fprivate/payroll.md holds an encoded slash, backslash or "
                                   f"double-encoded dot (%2F, %5C, %252E), which servers read differently; write the "
                                   f"path plainly")
    assert loop == ("error", f"{base}/public/loop redirects more than 5 times")
    assert plain["origin"] == f"{base}/public/canteen.md" and followed["origin"] == f"{base}/public/canteen.md"
    # state intact: nothing private was asked for or kept
    assert not [p for p in site.asked if "private" in p or "evil" in p], site.asked
    assert sorted(site.asked) == sorted(["/public/out", "/public/sneaky", "/public/hop1", "/public/hop2",
                                         "/public/hop3", "/public/slash", *["/public/loop"] * 6, "/public/canteen.md",
                                         "/public/in", "/public/canteen.md"])
    assert [d["origin"] for d in listed["documents"]] == [f"{base}/public/canteen.md"] * 2
    assert "Bob" not in json.dumps(recall) and len(recall["items"]) <= 2


def test_one_spelling_for_case_ports_and_escapes():
    parse = Address.parse
    assert str(parse("HTTPS://Docs.Example.:443/a/%7euser/b%41")) == "https://docs.example/a/~user/bA"
    assert str(parse("http://docs.example:80")) == "http://docs.example/"
    assert str(parse("http://docs.example:8080/a/./b/../c/#part")) == "http://docs.example:8080/a/c/"
    assert str(parse("http://docs.example/a%zz/%c3%a4")) == "http://docs.example/a%25zz/%C3%A4"
    assert str(parse("http://[::0:1]/x?q=a/../b")) == "http://[::1]/x?q=a/../b"  # a query is not a path
    root, bare = parse("http://docs.example/public/"), parse("http://docs.example/public")
    for url, admitted in (("http://docs.example/public", True), ("http://docs.example/public/x", True),
                          ("http://docs.example/publicity", False), ("http://docs.example:81/public/x", False),
                          ("https://docs.example/public/x", False), ("http://docs.example.evil/public/x", False)):
        assert parse(url).under(root) is admitted and parse(url).under(bare) is admitted, url
    for bad in ("ftp://docs.example/", "http://docs.example:99999/", "http://dócs.example/", "http://a b/",
                "http://docs.example/" + "a" * 5000):
        with pytest.raises(InvalidInput):
            parse(bad)

"""Issue 30, item 3: an anonymous ``/authorize`` cannot use the hub's fetch of client ID metadata documents
against its neighbours, nor hold it open.

The served hub is asked, with no token, to sign in a ``client_id`` that names a loopback service's admin
URL (``/internal/admin/reset?confirm=yes``), spelled every way that reaches loopback: with
``auth.client_metadata_private`` off (the default) the service hears nothing and the caller reads why.
With the setting on (the tests' own loopback servers), a server that answers one byte every 2 s is cut at
the 5 s deadline, and five such fetches at once hold at most four connections: the fifth is refused at
once, saying so. The hub keeps serving sign-ins meanwhile.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
import httpx2
import pytest
from anyio.abc import SocketStream
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from hermes_hub.protocol.authorization.fetch import inward
from tests.oauth.flow import Raw, hub_config
from tests.support import serve_asgi, serve_process

pytestmark = pytest.mark.anyio
PRIVATE = "it is on a loopback, private or link-local address"


def recording(heard: list[str]) -> Starlette:
    """A loopback-only service with a dangerous admin URL; it records every request that reaches it."""
    async def admin(request: Request) -> PlainTextResponse:
        heard.append(f"{request.method} {request.url.path}?{request.url.query}")
        return PlainTextResponse("reset done")

    return Starlette(routes=[Route("/{path:path}", admin)])


class Trickle:
    """A server that answers 200 and then one byte every 2 s, counting the connections it holds at once."""

    def __init__(self) -> None:
        self.open = self.most = self.served = 0

    async def handle(self, stream: SocketStream) -> None:
        self.open += 1
        self.most = max(self.most, self.open)
        self.served += 1
        try:
            async with stream:
                await stream.receive(65536)
                await stream.send(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 60000\r\n\r\n")
                for _ in range(30):
                    await stream.send(b" ")
                    await anyio.sleep(2)  # the attack itself: one byte every 2 s
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass
        finally:
            self.open -= 1


async def authorize(http: httpx2.AsyncClient, base: str, client_id: str) -> httpx2.Response:
    return await http.get(f"{base}/authorize", params={
        "response_type": "code", "client_id": client_id, "redirect_uri": "http://127.0.0.1:9/callback",
        "code_challenge": "x" * 43, "code_challenge_method": "S256", "state": "s"})


def test_loopback_private_link_local_and_mapped_addresses_count_as_inward():
    for address in ("127.0.0.1", "10.1.2.3", "192.168.0.1", "172.16.0.1", "169.254.169.254", "::1", "fe80::1",
                    "::ffff:127.0.0.1", "0.0.0.0", "::", "224.0.0.1", "100.64.0.1", "fc00::1"):
        assert inward(address), address
    assert not inward("93.184.216.34") and not inward("2606:4700::1111")


@pytest.mark.slow
async def test_an_anonymous_authorize_cannot_make_the_hub_call_a_loopback_service(tmp_path):
    heard: list[str] = []
    async with serve_asgi(lambda _: recording(heard), lifespan="off") as service, \
            serve_process(hub_config(), tmp_path) as served, httpx2.AsyncClient(timeout=20) as http:
        base = served.url.removesuffix("/mcp")
        port = service.rsplit(":", 1)[1]
        for target in (f"{service}/internal/admin/reset?confirm=yes",
                       f"http://localhost:{port}/internal/admin/reset?confirm=yes",
                       f"https://127.0.0.1:{port}/internal/admin/reset?confirm=yes",
                       f"https://[::ffff:127.0.0.1]:{port}/internal/admin/reset?confirm=yes",
                       f"https://2130706433:{port}/internal/admin/reset?confirm=yes"):
            answer = await authorize(http, base, target)
            assert answer.status_code == 400, (target, answer.text)
            said = answer.json()["error_description"]
            assert said.startswith("Client ID ") and "its client metadata document was not used because" in said
            assert PRIVATE in said and "sets auth.client_metadata_private to true in hub.json" in said, said
        assert heard == []  # the service never heard from the hub

        flow = Raw(http, served.url)  # what held still holds: a registered client signs in
        await flow.register()
        assert await flow.status((await flow.tokens())["access_token"]) == 200
    assert heard == []


@pytest.mark.slow
async def test_a_document_sent_one_byte_every_two_seconds_is_cut_at_the_deadline(tmp_path):
    slow = Trickle()
    config = hub_config()
    config["auth"]["client_metadata_private"] = True  # the slow server is on loopback
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as tg, serve_process(config, tmp_path) as served, \
            httpx2.AsyncClient(timeout=30) as http:
        tg.start_soon(listener.serve, slow.handle)
        base = served.url.removesuffix("/mcp")
        started = time.monotonic()
        with anyio.fail_after(20):
            answer = await authorize(http, base, f"http://127.0.0.1:{port}/slow.json")
        took = time.monotonic() - started
        assert answer.status_code == 400
        assert "it did not answer in full within 5 s" in answer.json()["error_description"]
        assert 4.5 <= took < 9, took
        with anyio.fail_after(10):
            while slow.open:  # the hub hung up on it
                await anyio.sleep(0.05)
        tg.cancel_scope.cancel()


@pytest.mark.slow
async def test_five_slow_fetches_at_once_hold_at_most_four_and_the_fifth_is_refused_at_once(tmp_path):
    slow = Trickle()
    config = hub_config()
    config["auth"]["client_metadata_private"] = True
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    answers: list[tuple[float, Any]] = []
    async with listener, anyio.create_task_group() as tg, serve_process(config, tmp_path) as served, \
            httpx2.AsyncClient(timeout=30, limits=httpx2.Limits(max_connections=20)) as http:
        tg.start_soon(listener.serve, slow.handle)
        base = served.url.removesuffix("/mcp")
        started = time.monotonic()

        async def one(i: int) -> None:
            answer = await authorize(http, base, f"http://127.0.0.1:{port}/slow-{i}.json")
            answers.append((time.monotonic() - started, answer))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as calls:
                for i in range(5):
                    calls.start_soon(one, i)
        tg.cancel_scope.cancel()
    assert slow.most <= 4 and slow.served == 4
    said = [a.json()["error_description"] for _, a in answers]
    busy = [(t, s) for (t, _), s in zip(answers, said, strict=True) if "already fetching 4" in s]
    assert len(busy) == 1 and busy[0][0] < 4, said  # refused at once, not after the others
    assert "the most it fetches at once; try again in a few seconds" in busy[0][1]
    assert sum("within 5 s" in s for s in said) == 4

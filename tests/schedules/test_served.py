"""A served hub (a real ``hermes-hub serve`` on the real clock): a host subscribed to hub://hermes/inbox over
HTTP hears resources/updated when a run lands, and the hub's webhook reaches a local receiver, signed,
retried after the receiver's first failure."""

from __future__ import annotations

import hashlib
import hmac
import json
import sys
from datetime import UTC, datetime, timedelta

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import Client
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.support import serve_asgi, serve_process, until

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"), pytest.mark.slow]


class Receiver:
    """A chat bot's webhook endpoint: fails the first delivery, takes the rest."""

    def __init__(self) -> None:
        self.got: list[tuple[bytes, dict[str, str]]] = []

    async def hook(self, request: Request) -> JSONResponse:
        self.got.append((await request.body(), dict(request.headers)))
        return JSONResponse({}, status_code=503 if len(self.got) == 1 else 200)

    def app(self, _: str) -> Starlette:
        return Starlette(routes=[Route("/hook", self.hook, methods=["POST"])])


async def test_a_run_reaches_a_host_subscribed_over_http_and_a_signed_webhook_retried_once(tmp_path):
    (tmp_path / "model.json").write_text(json.dumps([{"when": r"^\[scheduled run of", "text": "Time to stretch."},
                                                     {"text": "ok"}]))
    receiver = Receiver()
    updates: list[str] = []

    async def on_message(msg: object) -> None:
        if isinstance(msg, types.ResourceUpdatedNotification):
            updates.append(str(msg.params.uri))

    async with serve_asgi(receiver.app, lifespan="off") as base:
        config = {"storage": {"url": f"sqlite:///{tmp_path}/hub.db"}, "auth": {"local_user": "ana"},
                  "agent": {"provider": "scripted", "script": str(tmp_path / "model.json")},
                  "schedules": {"notify": f"{base}/hook"}}
        async with serve_process(config, tmp_path) as hub, Client(hub.url, mode="legacy",
                                                                  message_handler=on_message) as host:
            await host.subscribe_resource("hub://hermes/inbox")
            soon = (datetime.now(UTC) + timedelta(seconds=2)).isoformat()
            made = await host.call_tool("hermes_schedule_create", {"task": "tell me to stretch", "at": soon})
            assert not made.is_error, made.content[0].text
            await until(lambda: updates, timeout=60)
            assert updates == ["hub://hermes/inbox"]
            items = json.loads((await host.read_resource("hub://hermes/inbox")).contents[0].text)["items"]
            assert [(i["state"], i["answer"]) for i in items] == [("done", "Time to stretch.")]
            async with httpx2.AsyncClient(timeout=30) as http:
                page = (await http.get(hub.url.removesuffix("/mcp") + "/status")).text
            assert "tell me to stretch" in page and "done " in page  # the status page: its last run
            await until(lambda: len(receiver.got) >= 2, timeout=60)
            done = await anyio.run_process([sys.executable, "-m", "hermes_hub", "schedules", "secret", "--config",
                                            str(hub.config)])
    secret = done.stdout.decode().strip()
    (first, _), (body, headers) = receiver.got[:2]
    assert first == body and len(receiver.got) == 2  # the same delivery again, then no more
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["x-hermes-signature"], expected)
    sent = json.loads(body)
    assert (sent["event"], sent["user_id"], sent["state"], sent["answer"]) == (
        "schedule.occurrence", "ana", "done", "Time to stretch.")
    assert sent["trace"] == f"hub://hermes/traces/{sent['run_id']}" and secret not in body.decode()
    assert headers["x-hermes-delivery"] == str(sent["occurrence_id"])

"""The hub's lifecycle: its loops start after what they use and stop before it closes."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from hermes_hub import Hub
from hermes_hub.infra.storage import open_store
from tests.agent.vendors import serve_app
from tests.support import toy

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


class SlowModel:
    """An OpenAI-compatible endpoint that holds every request until released: each model call the
    hub makes (summaries, extraction) stays in flight while the hub stops."""

    def __init__(self) -> None:
        self.arrived, self._arrivals = anyio.create_memory_object_stream[dict[str, Any]](16)
        self.release = anyio.Event()

    async def _complete(self, request: Request) -> JSONResponse:
        await self.arrived.send(await request.json())
        await self.release.wait()
        return JSONResponse({"error": {"message": "released"}}, status_code=503)

    async def next_request(self) -> dict[str, Any]:
        return await self._arrivals.receive()

    @asynccontextmanager
    async def served(self) -> AsyncIterator[str]:
        app = Starlette(routes=[Route("/v1/chat/completions", self._complete, methods=["POST"])])
        async with serve_app(app) as url:
            try:
                yield url
            finally:
                self.release.set()
                self.arrived.close()
                self._arrivals.close()


def conversation(turns: int) -> list[dict[str, str]]:
    return [m for n in range(turns) for m in ({"role": "user", "content": f"I fly LH {1000 + n} on 2027-03-0{n + 1}"},
                                              {"role": "assistant", "content": "Noted."})]


async def test_a_hub_stopped_while_every_loop_is_busy_logs_no_error_and_writes_its_last_audit_rows(tmp_path, caplog):
    model = SlowModel()
    async with model.served() as url:
        path = tmp_path / "hub.json"
        path.write_text(json.dumps({
            "mcpServers": {"toy": toy()}, "hub": {"expose": "lazy"},
            "storage": {"url": f"sqlite:///{tmp_path}/hub.db"}, "memory": {"embedder": "none"},
            "agent": {"provider": "openai", "model": "slow", "base_url": url, "api_key": "k", "max_retries": 0}}))
        caplog.set_level(logging.INFO)
        with anyio.fail_after(60):  # the start, the calls and the stop
            async with Hub.from_file(path) as hub, hub.client() as host:  # a file: the config watch runs
                assert await hub.wait_settled(30)
                imported = await host.call_tool("hermes_session_import", {"title": "trip", "messages": conversation(4)})
                sid = imported.structured_content["session_id"]
                assert await hub.store.request_summary(hub.local.user_id, sid, 6, min_new=1)
                hub.summaries.wake()
                asked = [await model.next_request(), await model.next_request()]  # both workers are mid-call
                await host.call_tool("hermes_hub_status", {})  # an audit row still queued at the exit
            async with open_store(f"sqlite:///{tmp_path}/hub.db") as store:
                audited = await store.raw("SELECT tool FROM audit ORDER BY id")
                jobs = await store.raw("SELECT state, error FROM summary_jobs")
    texts = [json.dumps(body) for body in asked]
    assert sum("SUMMARY REQUEST" in t for t in texts) == 1  # one summary fold and one extraction in flight
    assert [t for (t,) in audited][-2:] == ["hermes_session_import", "hermes_hub_status"]
    assert jobs and all(error is None for _, error in jobs)  # cancelled at the stop, not failed by a closed model
    problems = [f"{r.name}: {r.getMessage()}" for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert problems == []

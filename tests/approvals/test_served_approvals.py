"""Issue 22 §3 against a served hub (``hermes-hub serve`` as a process, real HTTP, real SDK hosts, static
tokens for alice, bob and root): answered by elicitation, on the status page in Chromium, from the CLI,
and never by another user (the attack of tests/security/test_session_binding.py, one user answering
another's confirmation, has no way in: each answer names its identity in the store's update)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from hermes_hub.infra.storage import open_store
from hermes_hub.infra.storage.approvals import ApprovalRecord
from tests.support import PROJECT, Served, serve_process, toy, until
from tests.web.pages import browser

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
TOKENS = {"alice": "alice-token-0123456789abcdef", "bob": "bob-token-0123456789abcdef",
          "root": "root-token-0123456789abcdef"}
ROLES = {"alice": "user", "bob": "user", "root": "admin"}
SECONDS = 15_000  # Playwright's waits, in ms


@dataclass(frozen=True)
class Hub:
    served: Served
    db: str  # the store's URL, which the CLI reaches through hub.json

    @property
    def base(self) -> str:
        return self.served.url.removesuffix("/mcp")


@pytest.fixture(scope="module")
async def hub(tmp_path_factory) -> AsyncIterator[Hub]:
    tmp = tmp_path_factory.mktemp("approvals")
    db = f"sqlite:///{tmp / 'hub.db'}"
    config = {
        "mcpServers": {"toy": toy()},
        "storage": {"url": db},
        "auth": {"tokens": [{"token": t, "user": u, "role": ROLES[u]} for u, t in TOKENS.items()]},
        "guards": {"approve": {"tools": ["toy_echo"], "timeout": 90}},
    }
    async with serve_process(config, tmp) as served:
        yield Hub(served, db)


@asynccontextmanager
async def host(hub: Hub, user: str, mode: str = "auto", allow: bool | None = None) -> AsyncIterator[Client]:
    """An SDK host of ``user``'s; with ``allow`` set it answers elicitation (``allow: allow``), else it cannot."""
    async def on_elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"allow": allow})

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKENS[user]}"}, timeout=httpx2.Timeout(30, read=120))
    extra = {} if allow is None else {"elicitation_callback": on_elicit}
    async with http, Client(streamable_http_client(hub.served.url, http_client=http), mode=mode, **extra) as client:
        yield client


async def pending(hub: Hub, user: str, role: str = "user") -> list[ApprovalRecord]:
    async with open_store(hub.db) as store:
        return await store.list_approvals(user, role, pending_at=_now())


def _now() -> Any:
    from hermes_hub.infra.storage.records import utcnow
    return utcnow()


async def cli(hub: Hub, *args: str) -> tuple[int, str, str]:
    done = await anyio.run_process([sys.executable, "-m", "hermes_hub", *args, "--config", str(hub.served.config)],
                                   cwd=PROJECT, check=False)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


async def audit_of(hub: Hub, approval_id: str) -> list[tuple[str, str, str, str]]:
    """(row's tool, its user, by, via) of every audit row about ``approval_id``."""
    async def rows() -> list[tuple[str, str, str, str]]:
        async with open_store(hub.db) as store:
            found = await store.query_audit(limit=500)
        return [(r.tool, r.user_id, r.arguments["by"], r.arguments["via"]) for r in found
                if (r.arguments or {}).get("approval") == approval_id]
    return await until(rows, timeout=30)  # the hub writes its audit rows in the background


@asynccontextmanager
async def parked_call(hub: Hub, user: str, text: str) -> AsyncIterator[tuple[ApprovalRecord, dict[str, Any]]]:
    """``user`` calls toy_echo from a host that cannot be asked; yields the pending approval and, once the
    block ends, ``out["result"]``: what the call returned."""
    out: dict[str, Any] = {}
    async with host(hub, user) as client, anyio.create_task_group() as tg:
        async def call() -> None:
            out["result"] = await client.call_tool("toy_echo", {"text": text})

        tg.start_soon(call)
        waiting = await until(lambda: _one(pending(hub, user), text), timeout=30)
        yield waiting, out


async def _one(found: Any, text: str) -> ApprovalRecord | None:
    return next((r for r in await found if json.loads(r.preview) == {"text": text}), None)


@pytest.mark.parametrize("mode", ["legacy", "auto"])  # pushed elicitation; an input-required round (2026-07-28)
async def test_a_hosts_person_answers_by_elicitation(hub, mode):
    with anyio.fail_after(60):
        async with host(hub, "alice", mode, allow=True) as yes, host(hub, "alice", mode, allow=False) as no:
            ran = await yes.call_tool("toy_echo", {"text": f"yes {mode}"})
            refused = await no.call_tool("toy_echo", {"text": f"no {mode}"})
    assert (ran.content[0].text, ran.is_error) == (f"yes {mode}", False)
    assert refused.is_error and "the person declined the call to 'toy_echo'" in refused.content[0].text


async def test_a_parked_call_is_approved_from_the_cli_and_no_other_user_can_answer_it(hub):
    with anyio.fail_after(90):
        async with parked_call(hub, "alice", "from the cli") as (waiting, out):
            code, _, err = await cli(hub, "approve", waiting.id, "--token", TOKENS["bob"])  # another user
            assert code == 1 and f"pending approval '{waiting.id}' not found" in err
            async with httpx2.AsyncClient(timeout=10) as http:  # bob and an admin on the status page: 404 too
                for stranger, answer in (("bob", "deny"), ("root", "approve")):
                    refused = await http.post(f"{hub.base}/status/approvals/{waiting.id}/{answer}",
                                              headers={"Authorization": f"Bearer {TOKENS[stranger]}"})
                    assert refused.status_code == 404, refused.text
            assert [r.id for r in await pending(hub, "alice")] == [waiting.id]  # still waiting, for alice only
            code, printed, err = await cli(hub, "approve", waiting.id, "--token", TOKENS["alice"], "--json")
            assert code == 0, err
        rows = await audit_of(hub, waiting.id)
    assert json.loads(printed)["state"] == "approved"
    assert (out["result"].content[0].text, out["result"].is_error) == ("from the cli", False)
    assert rows == [("approval_approved", "alice", "alice", "cli")]


async def test_a_parked_call_is_answered_on_the_status_page_in_chromium_with_its_csrf_token(hub):
    with anyio.fail_after(90):
        async with browser() as chromium:
            bobs = await chromium.new_page()
            await log_in(bobs, hub, "bob")
            page = await chromium.new_page()
            await log_in(page, hub, "alice")
            async with parked_call(hub, "alice", "from the page") as (waiting, out):
                forged = await page.evaluate(f"""async () => (await fetch('/status/approvals/{waiting.id}/approve',
                    {{method: 'POST', body: new URLSearchParams({{csrf: 'wrong'}})}})).status""")
                assert forged == 403
                await bobs.reload()
                assert await bobs.locator(f"#approval-{waiting.id}").count() == 0  # not his to see
                await page.reload()
                row = page.locator(f"#approval-{waiting.id}")
                await row.wait_for(timeout=SECONDS)
                assert "toy_echo" in await row.inner_text() and "from the page" in await row.inner_text()
                await row.locator("button.approve").click()
                await page.wait_for_url("**/status#approvals", timeout=SECONDS)
                assert await page.locator(f"#approval-{waiting.id}").count() == 0
            async with parked_call(hub, "alice", "denied on the page") as (second, denied):
                await page.reload()
                await page.locator(f"#approval-{second.id} button.deny").click()
                await page.wait_for_url("**/status#approvals", timeout=SECONDS)
        rows = await audit_of(hub, waiting.id)
    assert (out["result"].content[0].text, out["result"].is_error) == ("from the page", False)
    assert denied["result"].is_error and "the person declined" in denied["result"].content[0].text
    assert rows == [("approval_approved", "alice", "alice", "status_page")]


async def log_in(page: Any, hub: Hub, user: str) -> None:
    await page.goto(f"{hub.base}/status")
    await page.fill("#token", TOKENS[user])
    await page.click("button[type=submit]")
    await page.wait_for_selector("#server-toy", timeout=SECONDS)

"""The status page over real HTTP (a served hub process), as scripts and browsers without JavaScript see it."""

from __future__ import annotations

import json

import anyio
import httpx2
import pytest

from tests.support import serve_process, until
from tests.web.pages import TOKENS, base_url, hub_config, seed_runs

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def bearer(user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[user]}"}


async def test_without_tokens_the_local_user_sees_everything_as_html_and_json_but_only_under_a_loopback_name(
        tmp_path):
    async with serve_process(hub_config(tokens=False), tmp_path) as served:
        url = base_url(served.url)
        async with httpx2.AsyncClient(timeout=10) as http:
            page = await http.get(f"{url}/status")
            data = (await http.get(f"{url}/status.json")).json()
            # A site whose name resolves to 127.0.0.1 (DNS rebinding) must not read the local user's page.
            rebound = await http.get(f"{url}/status.json", headers={"Host": "evil.example"})
            rebound_page = await http.get(f"{url}/status", headers={"Host": "evil.example"})
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert 'id="server-alpha"' in page.text and 'id="server-beta"' in page.text
    assert "alpha_echo" in page.text  # the expandable list of tools, with descriptions
    assert data["viewer"]["admin"] is True
    assert {s["name"]: s["state"] for s in data["servers"]} == {"alpha": "READY", "beta": "READY"}
    alpha = next(s for s in data["servers"] if s["name"] == "alpha")
    assert alpha["schema_tokens"] > 0 and any(t["name"] == "alpha_echo" for t in alpha["tool_list"])
    assert "memory" in data and "csrf" in data
    assert rebound.status_code == 421 and "alpha" not in rebound.text
    assert rebound_page.status_code == 421 and "alpha" not in rebound_page.text
    assert "hub.allowed_hosts" in rebound.json()["error_description"]


async def test_with_tokens_nothing_is_sent_before_login_a_bearer_header_works_and_login_sets_a_strict_cookie(
        tmp_path):
    async with serve_process(hub_config(tokens=True), tmp_path) as served:
        url = base_url(served.url)
        async with httpx2.AsyncClient(timeout=10) as http:
            page = await http.get(f"{url}/status")
            data = await http.get(f"{url}/status.json")
            live = await http.get(f"{url}/status/live")
            wrong = await http.get(f"{url}/status.json", headers={"Authorization": "Bearer not-a-token-at-all"})
            alice = await http.get(f"{url}/status.json", headers=bearer("alice"))
            bad = await http.post(f"{url}/status/login", data={"token": "guessed-token-0123456789"})
            good = await http.post(f"{url}/status/login", data={"token": TOKENS["bob"]})
            cookie = good.headers["set-cookie"]
            bobs = await http.get(f"{url}/status", headers={"Cookie": cookie.split(";")[0]})
    assert page.status_code == 401 and 'name="token"' in page.text and "alpha" not in page.text
    assert data.status_code == 401 and "alpha" not in data.text and "token create" in data.text
    assert live.status_code == 401 and wrong.status_code == 401
    assert alice.status_code == 200 and alice.json()["viewer"] == {"user": "alice", "admin": False}
    assert "csrf" not in alice.json()
    assert bad.status_code == 401 and "not valid" in bad.text and "set-cookie" not in bad.headers
    assert good.status_code == 303 and good.headers["location"] == "/status"
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    assert TOKENS["bob"] not in cookie  # a login session's random id (see test_status_logins.py)
    assert bobs.status_code == 200 and "bob" in bobs.text and 'id="server-alpha"' in bobs.text


async def test_a_user_sees_only_their_own_calls_and_runs_and_an_admin_sees_everyones_calls(tmp_path):
    from tests.support import as_user

    async with serve_process(hub_config(tokens=True), tmp_path) as served:
        url = base_url(served.url)
        runs = await seed_runs("alice", "bob")
        async with as_user(served.url, TOKENS["alice"]) as client:
            await client.call_tool("alpha_echo", {"text": "from alice"})
        async with as_user(served.url, TOKENS["bob"]) as client:
            await client.call_tool("beta_echo", {"text": "from bob"})
        async with httpx2.AsyncClient(timeout=10) as http:
            bob = (await http.get(f"{url}/status.json", headers=bearer("bob"))).json()
            root = (await http.get(f"{url}/status.json", headers=bearer("root"))).json()
            mine = await http.get(f"{url}/status/runs/{runs['bob']}", headers=bearer("bob"))
            theirs = await http.get(f"{url}/status/runs/{runs['alice']}", headers=bearer("bob"))
            filtered = (await http.get(f"{url}/status.json", params={"tool": "beta_echo", "outcome": "ok"},
                                       headers=bearer("root"))).json()
    assert [r["tool"] for r in bob["calls"]["rows"]] == ["beta_echo"]
    assert [r["run_id"] for r in bob["runs"]] == [runs["bob"]]
    assert {r["user"] for r in root["calls"]["rows"]} == {"alice", "bob"}
    assert [r["user"] for r in filtered["calls"]["rows"]] == ["bob"]
    assert mine.status_code == 200 and "Round 1" in mine.text and "alpha_echo" in mine.text
    assert theirs.status_code == 404 and "secret plans of alice" not in theirs.text
    beta = next(s for s in bob["servers"] if s["name"] == "beta")
    assert beta["activity"]["calls"] == 1 and sum(beta["activity"]["calls_per_minute"]) == 1


async def test_actions_need_an_admin_and_the_csrf_token(tmp_path):
    async with serve_process(hub_config(tokens=True), tmp_path) as served:
        url = base_url(served.url)
        async with httpx2.AsyncClient(timeout=10) as http:
            as_bob = await http.post(f"{url}/status/servers/beta/restart", headers=bearer("bob"))
            login = await http.post(f"{url}/status/login", data={"token": TOKENS["root"]})
            cookie = {"Cookie": login.headers["set-cookie"].split(";")[0]}
            no_csrf = await http.post(f"{url}/status/servers/beta/restart", headers=cookie, data={"csrf": "x"})
            page = await http.get(f"{url}/status", headers=cookie)
            csrf = page.text.split('name="csrf" value="')[1].split('"')[0]
            cross = await http.post(f"{url}/status/reload", data={"csrf": csrf},
                                    headers={**cookie, "Origin": "http://evil.example"})
            done = await http.post(f"{url}/status/servers/beta/restart", data={"csrf": csrf}, headers=cookie)
            script = await http.post(f"{url}/status/reload", headers=bearer("root"))
            async def beta_back() -> bool:  # the restarted server comes back READY with its restart counted
                beta = next(s for s in (await http.get(f"{url}/status.json", headers=bearer("root"))).json()[
                    "servers"] if s["name"] == "beta")
                return beta["state"] == "READY" and beta["restarts"] == 1

            await until(beta_back, timeout=15, every=0.1)
            bob_page = await http.get(f"{url}/status", headers=bearer("bob"))
            calls = (await http.get(f"{url}/status.json", headers=bearer("root"))).json()["calls"]["rows"]
    acts = sorted((r["tool"], r["user"]) for r in calls if r["tool"].startswith("status_"))
    assert acts == [("status_reload", "root"), ("status_restart", "root")]  # the audit says who acted
    assert as_bob.status_code == 403 and "admin" in as_bob.json()["error"]
    assert no_csrf.status_code == 403 and "CSRF" in no_csrf.json()["error"]
    assert cross.status_code == 403
    assert done.status_code == 303
    assert script.status_code == 200 and script.json()["servers"] == ["alpha", "beta"]
    assert "data-action" not in bob_page.text and 'name="csrf"' not in bob_page.text  # no buttons for users


async def ticks(lines, n: int) -> list[int]:
    """The seq of the next ``n`` ticks on a /status/stream response's ``aiter_lines()``."""
    seqs: list[int] = []
    async for line in lines:
        if line.startswith("data: "):
            seqs.append(json.loads(line.removeprefix("data: "))["seq"])
            if len(seqs) == n:
                return seqs
    raise AssertionError(f"the stream ended after {seqs}")


async def test_the_live_stream_ticks_for_what_its_viewer_sees_only(tmp_path):
    from tests.support import as_user

    async with serve_process(hub_config(tokens=True), tmp_path) as served:
        url = base_url(served.url)
        async with httpx2.AsyncClient(timeout=30) as http, \
                http.stream("GET", f"{url}/status/stream", headers=bearer("root")) as admin, \
                http.stream("GET", f"{url}/status/stream", headers=bearer("alice")) as alice:
            assert admin.status_code == alice.status_code == 200
            assert alice.headers["content-type"].startswith("text/event-stream")
            admin_lines, alice_lines = admin.aiter_lines(), alice.aiter_lines()
            with anyio.fail_after(30):
                async with as_user(served.url, TOKENS["bob"]) as host:
                    await host.call_tool("alpha_echo", {"text": "bob's"})
                bobs = await ticks(admin_lines, 2)  # the call requested, and finished
                async with as_user(served.url, TOKENS["alice"]) as host:
                    await host.call_tool("alpha_echo", {"text": "alice's"})
                alices = await ticks(admin_lines, 2)
                assert await ticks(alice_lines, 2) == alices  # not bob's, which came first
            refused = await http.get(f"{url}/status/stream")
    assert max(bobs) < min(alices)
    assert refused.status_code == 401

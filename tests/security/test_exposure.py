"""Attacks on how a served hub is reached: authentication that must never switch itself off, DNS
rebinding, oversized heads, forged X-Forwarded-For and login CSRF (issue 16, items 1, 3, 4, 7, 8).
Each runs ``hermes-hub serve`` as a real process and talks to it over real HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from bench.fuzz_bounds import raw_head
from hermes_hub.infra.config import load_config
from hermes_hub.protocol.upstream.exposure import Exposure
from tests.support import PROJECT, Served, serve_process, toy
from tests.web.pages import cli, store_token

pytestmark = pytest.mark.anyio
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "intruder", "version": "1"}}}
CREATE = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
          "params": {"name": "hermes_session_create", "arguments": {"title": "mine now"}}}


def base(served: Served) -> str:
    return served.url.removesuffix("/mcp")


def token_cli(config: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "hermes_hub", "token", *args, "--config", str(config)],
                          cwd=PROJECT, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode().strip()


def with_token(config: dict[str, Any], tmp_path: Path, user: str) -> tuple[str, str]:
    """Create a token in the store the hub at ``tmp_path`` will use, before it starts: (token, id)."""
    path = tmp_path / "hub.json"
    path.write_text(json.dumps(config))
    token = token_cli(path, "create", user)
    listed = json.loads(token_cli(path, "list", "--json"))
    return token, next(t["id"] for t in listed if t["user"] == user)


async def unauthenticated_attempts(served: Served) -> dict[str, httpx2.Response]:
    port = served.url.rsplit(":", 1)[1].split("/")[0]
    rebound = {**HEADERS, "Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
    async with httpx2.AsyncClient(timeout=10) as http:
        return {
            "initialize": await http.post(served.url, json=INIT, headers=rebound),
            "call": await http.post(served.url, json=CREATE, headers=HEADERS),
            "status": await http.get(f"{base(served)}/status.json", headers={"Host": "localhost"}),
            "reload": await http.post(f"{base(served)}/status/reload", headers={"Host": "localhost"}),
        }


@pytest.mark.slow
async def test_revoking_the_last_token_before_any_request_leaves_every_caller_refused(tmp_path):
    config = {"mcpServers": {"toy": toy()}}
    _, token_id = with_token(config, tmp_path, "ops")
    async with serve_process(config, tmp_path, host="0.0.0.0") as served:
        await cli(served, "token", "revoke", token_id)
        with anyio.fail_after(30):
            tried = await unauthenticated_attempts(served)
    assert {name: r.status_code for name, r in tried.items()} == {
        "initialize": 401, "call": 401, "status": 401, "reload": 401}
    assert "root" not in tried["status"].text and "csrf" not in tried["status"].text
    assert "authentication: required (it listens on 0.0.0.0" in served.log.read_text()
    assert "none is left" in served.log.read_text() and "hermes-hub token create USER" in served.log.read_text()


@pytest.mark.slow
async def test_revoking_the_last_token_after_it_was_used_refuses_it_and_the_status_page_stays_shut(tmp_path):
    config = {"mcpServers": {"toy": toy()}}
    token, token_id = with_token(config, tmp_path, "ops")
    async with serve_process(config, tmp_path, host="0.0.0.0") as served:
        with anyio.fail_after(30):
            async with httpx2.AsyncClient(timeout=10) as http:
                used = await http.post(served.url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {token}"})
                await cli(served, "token", "revoke", token_id)
                again = await http.post(served.url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {token}"})
            tried = await unauthenticated_attempts(served)
    assert used.status_code == 200
    assert again.status_code == 401 and "invalid or revoked token" in again.json()["error_description"]
    assert all(r.status_code == 401 for r in tried.values()), {k: r.status_code for k, r in tried.items()}


@pytest.mark.slow
async def test_a_hub_with_auth_required_and_no_token_yet_refuses_everyone_until_one_is_created(tmp_path):
    async with serve_process({"mcpServers": {}, "auth": {"required": True}}, tmp_path) as served:
        with anyio.fail_after(30):
            async with httpx2.AsyncClient(timeout=10) as http:
                before = await http.post(served.url, json=INIT, headers=HEADERS)
                token, _ = await store_token(served, "ops")
                after = await http.post(served.url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {token}"})
    assert before.status_code == 401 and after.status_code == 200


@pytest.mark.parametrize("bind", ["127.0.0.2", "127.0.0.1"])
@pytest.mark.slow
async def test_a_loopback_hub_without_tokens_refuses_rebound_names_on_every_path(tmp_path, bind):
    async with serve_process({"mcpServers": {"toy": toy()}}, tmp_path, host=bind) as served:
        port = served.url.rsplit(":", 1)[1].split("/")[0]
        evil = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
        with anyio.fail_after(30):
            async with httpx2.AsyncClient(timeout=10) as http:
                rebound = await http.post(served.url, json=INIT, headers={**HEADERS, **evil})
                page = await http.get(f"{base(served)}/status.json", headers=evil)
                foreign_page = await http.post(served.url, json=INIT,
                                               headers={**HEADERS, "Origin": "http://evil.example"})
                null_origin = await http.post(served.url, json=INIT, headers={**HEADERS, "Origin": "null"})
                own = await http.post(served.url, json=INIT, headers=HEADERS)
                from_localhost = await http.post(served.url, json=INIT,
                                                 headers={**HEADERS, "Origin": "http://localhost:6274"})
    assert rebound.status_code == 421 and page.status_code == 421
    assert "hub.allowed_hosts" in rebound.json()["error_description"]
    assert "toy" not in page.text
    assert foreign_page.status_code == 403 and null_origin.status_code == 403
    assert own.status_code == 200 and '"serverInfo"' in own.text
    assert from_localhost.status_code == 200  # a local tool's page (an inspector on localhost) still works


@pytest.mark.slow
async def test_names_in_hub_allowed_hosts_are_answered_and_others_still_refused(tmp_path):
    config = {"mcpServers": {}, "hub": {"allowed_hosts": ["hub.example"]}}
    async with serve_process(config, tmp_path) as served:
        with anyio.fail_after(30):
            async with httpx2.AsyncClient(timeout=10) as http:
                proxied = await http.post(served.url, json=INIT, headers={**HEADERS, "Host": "hub.example"})
                page = await http.get(f"{base(served)}/status.json", headers={"Host": "hub.example"})
                other = await http.post(served.url, json=INIT, headers={**HEADERS, "Host": "other.example"})
    assert proxied.status_code == 200 and page.status_code == 200
    assert other.status_code == 421


async def healthz_latencies(url: str, until: anyio.Event) -> list[float]:
    seen: list[float] = []
    async with httpx2.AsyncClient(timeout=5) as http:
        while not until.is_set():
            started = time.monotonic()
            assert (await http.get(url)).status_code == 200
            seen.append(time.monotonic() - started)
            await anyio.sleep(0.05)  # the probe's own pace, not a wait for a state
    return seen


@pytest.mark.slow
async def test_four_requests_with_50_mb_headers_get_431_quickly_and_the_hub_stays_responsive(tmp_path):
    import psutil

    config = {"mcpServers": {}, "auth": {"tokens": [{"token": "ops-token-0123456789", "user": "ops"}]}}
    async with serve_process(config, tmp_path) as served:
        port = int(served.url.rsplit(":", 1)[1].split("/")[0])
        rss_before = psutil.Process(served.proc.pid).memory_info().rss
        answers: list[tuple[bytes, int, float]] = []
        latencies: list[float] = []
        done = anyio.Event()

        async def attack() -> None:
            answers.append(await raw_head(port, 50 * 1024 * 1024))

        async def probe() -> None:
            latencies.extend(await healthz_latencies(f"{base(served)}/healthz", done))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as outer:
                outer.start_soon(probe)
                async with anyio.create_task_group() as attackers:
                    for _ in range(4):
                        attackers.start_soon(attack)
                done.set()
        rss_after = psutil.Process(served.proc.pid).memory_info().rss
    assert len(answers) == 4
    for answer, sent, seconds in answers:
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
        assert b"exceed 32 KiB" in answer
        assert seconds < 5 and sent < 10 * 1024 * 1024  # refused long before the 50 MB were sent
    assert latencies and max(latencies) < 1.0
    assert rss_after - rss_before < 50 * 1024 * 1024


async def test_a_long_bearer_token_is_refused_unread_and_a_huge_one_gets_431(tmp_path):
    config = {"mcpServers": {}, "auth": {"tokens": [{"token": "ops-token-0123456789", "user": "ops"}]}}
    async with serve_process(config, tmp_path) as served:
        with anyio.fail_after(30):
            async with httpx2.AsyncClient(timeout=10) as http:
                long = await http.post(served.url, json=INIT, headers={**HEADERS, "Authorization": "Bearer " + "x" * 2000})
                ok = await http.post(served.url, json=INIT,
                                     headers={**HEADERS, "Authorization": "Bearer ops-token-0123456789"})
            answer, _, _ = await raw_head(int(served.url.rsplit(":", 1)[1].split("/")[0]), 1024 * 1024)
    assert long.status_code == 401 and "token too long" in long.json()["error_description"]
    assert ok.status_code == 200  # a long body or many headers under the limit are fine
    assert answer.startswith(b"HTTP/1.1 431 ")


@pytest.mark.slow
async def test_x_forwarded_for_is_ignored_unless_the_sender_is_a_trusted_proxy(tmp_path):
    alice = "alice-token-0123456789"
    tokens = {"tokens": [{"token": alice, "user": "alice"}]}
    wrong = [{**HEADERS, "Authorization": f"Bearer guess-{n}", "X-Forwarded-For": f"10.0.0.{n}"} for n in range(12)]
    elsewhere = httpx2.AsyncHTTPTransport(local_address="127.0.0.2")
    (tmp_path / "plain").mkdir()
    async with serve_process({"mcpServers": {}, "auth": tokens}, tmp_path / "plain") as served:
        with anyio.fail_after(30):
            async with httpx2.AsyncClient(timeout=10) as http:
                codes = [(await http.post(served.url, json=INIT, headers=h)).status_code for h in wrong]
                for n in range(6):  # forged: blame another address
                    await http.post(served.url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer x{n}",
                                                                    "X-Forwarded-For": "127.0.0.3"})
            async with httpx2.AsyncClient(timeout=10, transport=httpx2.AsyncHTTPTransport(
                    local_address="127.0.0.3")) as victim:
                blamed = await victim.post(served.url, json=INIT,
                                           headers={**HEADERS, "Authorization": f"Bearer {alice}"})
    assert codes == [401] * 5 + [429] * 7  # one address, whatever header it sends
    assert blamed.status_code == 200  # the forged header locked nobody else out

    (tmp_path / "proxied").mkdir()
    config = {"mcpServers": {}, "auth": tokens, "hub": {"trusted_proxies": ["127.0.0.2"]}}
    async with serve_process(config, tmp_path / "proxied") as served:
        with anyio.fail_after(30):
            async with httpx2.AsyncClient(timeout=10, transport=elsewhere) as proxy:
                through = [(await proxy.post(served.url, json=INIT, headers={
                    **HEADERS, "Authorization": "Bearer guess", "X-Forwarded-For": "203.0.113.7"})).status_code
                    for _ in range(6)]
                other_client = await proxy.post(served.url, json=INIT, headers={
                    **HEADERS, "Authorization": f"Bearer {alice}", "X-Forwarded-For": "203.0.113.8"})
    assert through == [401] * 5 + [429]  # counted against the client the proxy names
    assert other_client.status_code == 200


async def test_a_login_form_posted_from_another_site_logs_nobody_in(tmp_path):
    alice = "alice-token-0123456789"
    config = {"mcpServers": {}, "auth": {"tokens": [{"token": alice, "user": "alice"}]}}
    # On 0.0.0.0 no Host/Origin list applies (tokens guard the hub): the login form checks the origin itself.
    async with serve_process(config, tmp_path, host="0.0.0.0") as served:
        url = base(served)
        with anyio.fail_after(30):
            async with httpx2.AsyncClient(timeout=10) as http:
                forged = await http.post(f"{url}/status/login", data={"token": alice},
                                         headers={"Origin": "http://evil.example"})
                by_referer = await http.post(f"{url}/status/login", data={"token": alice},
                                             headers={"Referer": "http://evil.example/page"})
                own = await http.post(f"{url}/status/login", data={"token": alice}, headers={"Origin": url})
                page = await http.get(f"{url}/status", headers={"Cookie": own.headers["set-cookie"].split(";")[0]})
    assert forged.status_code == 403 and "set-cookie" not in forged.headers
    assert "another site" in forged.text
    assert by_referer.status_code == 403 and "set-cookie" not in by_referer.headers
    assert own.status_code == 303 and "set-cookie" in own.headers
    assert "log out" in page.text  # a login can be ended


@pytest.mark.slow
async def test_the_status_page_of_a_hub_without_tokens_shows_no_log_out_link(tmp_path):
    async with serve_process({"mcpServers": {}}, tmp_path) as served:
        with anyio.fail_after(30):
            async with httpx2.AsyncClient(timeout=10) as http:
                page = await http.get(f"{base(served)}/status")
    assert page.status_code == 200 and "(admin)" in page.text
    assert "log out" not in page.text


def decide(tmp_path: Path, bind: str, has_tokens: bool, **sections: Any) -> Exposure:
    path = tmp_path / "decide.json"
    path.write_text(json.dumps({"mcpServers": {}, **sections}))
    return Exposure.decide(load_config(path), bind, has_tokens)


def test_authentication_is_required_everywhere_but_on_a_loopback_hub_with_no_tokens_and_no_proxies(tmp_path):
    assert not decide(tmp_path, "127.0.0.1", False).required
    assert not decide(tmp_path, "::1", False).required
    assert decide(tmp_path, "127.0.0.1", True).required
    assert decide(tmp_path, "0.0.0.0", True).required
    assert decide(tmp_path, "127.0.0.1", False, hub={"trusted_proxies": ["10.0.0.0/8"]}).required
    assert decide(tmp_path, "127.0.0.1", False, auth={"required": True}).required
    assert decide(tmp_path, "0.0.0.0", False).refusal().startswith("refusing to listen on 0.0.0.0: no tokens")
    assert "auth.required: false" in decide(tmp_path, "10.1.2.3", True, auth={"required": False}).refusal()
    assert decide(tmp_path, "127.0.0.1", True).refusal() is None


def test_host_names_of_a_loopback_hub_are_its_addresses_localhost_and_the_configured_ones(tmp_path):
    exposure = decide(tmp_path, "127.0.0.2", False, hub={"allowed_hosts": ["Hub.Example"]})
    assert exposure.host_allowed("127.0.0.2") and exposure.host_allowed("localhost")
    assert exposure.host_allowed("hub.example") and not exposure.host_allowed("evil.example")
    assert not exposure.origin_allowed("null") and not exposure.origin_allowed("http://[evil")
    assert exposure.origin_allowed("http://localhost:6274")
    assert decide(tmp_path, "0.0.0.0", True).names is None  # reached by names it cannot know: tokens guard it


def test_hub_json_names_a_bad_proxy_address_and_a_host_with_a_port(tmp_path):
    from hermes_hub.infra.errors import ConfigError

    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"mcpServers": {}, "hub": {"trusted_proxies": ["proxy.lan"]}}))
    with pytest.raises(ConfigError, match=r"hub\.trusted_proxies.*'proxy\.lan' is not an address or network"):
        load_config(path)
    path.write_text(json.dumps({"mcpServers": {}, "hub": {"allowed_hosts": ["hub.example:443"]}}))
    with pytest.raises(ConfigError, match="no port"):
        load_config(path)

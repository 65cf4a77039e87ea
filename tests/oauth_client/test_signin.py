"""The hub signs in to an OAuth-protected server: NEEDS_AUTH with the fix, `hermes-hub login` through a
browser ($BROWSER) and a loopback callback, a running hub picking the grant up, refresh before expiry and
on a 401, a failed refresh back to NEEDS_AUTH, logout, and no token or code anywhere it must not be."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from hermes_hub.infra.config import load_config
from hermes_hub.downstream.grants import Grants
from hermes_hub.app.hub import Hub
from hermes_hub.infra.storage import open_store
from hermes_hub.services.vault import Vault, load_hub_key
from tests.oauth_client.protected import Protected, serving
from tests.support import PROJECT, until

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
BROWSER = str(Path(__file__).with_name("browser.py"))
FIX = "hermes-hub login crm"


def write_config(tmp_path: Path, url: str, **server: Any) -> Path:
    path = tmp_path / "hub.json"
    path.write_text(json.dumps({"mcpServers": {"crm": {"url": url, "startup_timeout": 10, **server}},
                                "storage": {"url": "sqlite:///hub.db"}}))
    return path


async def cli(*args: str, browser: str = BROWSER) -> tuple[int, str]:
    """A real `hermes-hub` process (the test's loop keeps serving the protected server meanwhile)."""
    env = {**os.environ, "BROWSER": browser}
    env.pop("HERMES_SECRET_KEY", None)
    with anyio.fail_after(60):
        done = await anyio.run_process([sys.executable, "-m", "hermes_hub", *args], env=env, cwd=PROJECT,
                                       check=False)
    return done.returncode, done.stdout.decode() + done.stderr.decode()


async def stored(config: Path, user: str = "") -> Any:
    cfg = load_config(config)
    async with open_store(cfg.storage.url, base_dir=cfg.base_dir) as store:
        vault = Vault(store, load_hub_key(cfg.storage.url, cfg.base_dir))
        return (await Grants(lambda: vault).load(user, "crm")).grant


def leaked(protected: Protected, *texts: str) -> list[str]:
    return [s for s in protected.issued if any(s in t for t in texts)]


async def call(hub: Hub, tool: str = "crm_whoami") -> tuple[bool, str]:
    async with hub.client() as host:
        result = await host.call_tool(tool, {})
    return bool(result.is_error), " ".join(getattr(c, "text", "") for c in result.content)


async def test_a_server_asking_for_oauth_is_needs_auth_and_servers_and_calls_say_how_to_sign_in(tmp_path):
    protected = Protected()
    async with serving(protected) as url:
        config = write_config(tmp_path, url)
        code, out = await cli("servers", "--config", str(config))
        assert code == 3 and "NEEDS_AUTH" in out and FIX in out, out
        async with Hub.from_file(config) as hub:
            await hub.wait_settled(20)
            status = hub.status(hub.local)["servers"][0]
            assert status["state"] == "NEEDS_AUTH" and FIX in status["fix"] and "Connect" in status["fix"]
            assert hub.pool.connections["crm"].restarts == 0  # waiting for a person, not retrying in a loop
            is_error, text = await call(hub, "hermes_hub_status")
            assert not is_error and "NEEDS_AUTH" in text and FIX in text
            is_error, text = await call(hub)  # one of its tools: a tool error the model can pass on
            assert is_error and "NEEDS_AUTH" in text and FIX in text, text


async def test_login_stores_a_sealed_grant_that_a_running_hub_picks_up_without_a_restart(tmp_path):
    protected = Protected()
    async with serving(protected) as url:
        config = write_config(tmp_path, url)
        async with Hub.from_file(config) as hub:
            with anyio.fail_after(20):
                await hub.pool.wait_for(lambda: hub.pool.connections["crm"].state.value == "NEEDS_AUTH")
            code, login_out = await cli("login", "crm", "--config", str(config), "--timeout", "20")
            assert code == 0, login_out
            assert "Signed in to crm for the hub" in login_out and "/authorize?" in login_out
            with anyio.fail_after(20):  # the hub polls the store: the grant came from another process
                await hub.pool.wait_for(lambda: hub.pool.connections["crm"].ready)
            assert await call(hub) == (False, "signed in to the CRM")
        grant = await stored(config)
        assert grant is not None and grant.tokens and grant.tokens.access_token in protected.issued
        check_code, check_out = await cli("check", "--config", str(config))
        servers_code, servers_out = await cli("servers", "--config", str(config), "--json")
        assert servers_code == 0, servers_out
        database = b"".join(p.read_bytes() for p in tmp_path.glob("hub.db*")).decode("latin-1")
        assert leaked(protected, login_out, check_out, servers_out, database) == []


async def test_an_access_token_is_refreshed_before_it_expires_and_once_on_a_401(tmp_path):
    protected = Protected(expires_in=2)  # refreshed a fifth of a second before its end
    async with serving(protected) as url:
        config = write_config(tmp_path, url)
        code, out = await cli("login", "crm", "--config", str(config), "--timeout", "20")
        assert code == 0, out
        async with Hub.from_file(config) as hub:
            with anyio.fail_after(20):
                await hub.pool.wait_for(lambda: hub.pool.connections["crm"].ready)
            refused = protected.refused
            await until(lambda: protected.refreshes >= 1, timeout=20)  # health checks keep it in use
            assert protected.refused == refused  # refreshed before the server had to refuse it
            protected.expires_in = 3600
            await until(lambda: protected.refreshes >= 2, timeout=20)  # the 2-second one it holds, once more
            protected.revoke_access()  # the server forgets it early: a 401, a refresh, the same request again
            before = protected.refreshes
            assert await call(hub) == (False, "signed in to the CRM")
            assert protected.refreshes == before + 1 and hub.pool.connections["crm"].ready
        grant = await stored(config)
        assert grant.tokens.access_token in protected.access  # the refreshed grant was written back


async def test_a_refresh_that_fails_puts_the_server_back_in_needs_auth_until_the_next_login(tmp_path, caplog):
    protected = Protected()
    async with serving(protected) as url:
        config = write_config(tmp_path, url)
        code, out = await cli("login", "crm", "--config", str(config), "--timeout", "20")
        assert code == 0, out
        async with Hub.from_file(config) as hub:
            with anyio.fail_after(20):
                await hub.pool.wait_for(lambda: hub.pool.connections["crm"].ready)
            protected.refresh_ok = False
            protected.revoke_access()
            is_error, text = await call(hub)
            assert is_error and FIX in text, text
            with anyio.fail_after(20):
                await hub.pool.wait_for(lambda: hub.pool.connections["crm"].state.value == "NEEDS_AUTH")
            status = hub.status(hub.local)["servers"][0]
            assert "refresh" in status["error"] and FIX in status["fix"]
            protected.refresh_ok = True
            code, again = await cli("login", "crm", "--config", str(config), "--timeout", "20")
            assert code == 0, again
            with anyio.fail_after(20):
                await hub.pool.wait_for(lambda: hub.pool.connections["crm"].ready)
            assert await call(hub) == (False, "signed in to the CRM")
        assert leaked(protected, caplog.text, text, json.dumps(status), out, again) == []


async def test_login_for_a_user_keeps_that_users_grant_apart_and_logout_forgets_it(tmp_path):
    protected = Protected()
    async with serving(protected) as url:
        config = write_config(tmp_path, url)
        code, out = await cli("login", "crm", "--config", str(config), "--user", "alice", "--timeout", "20")
        assert code == 0 and "for user 'alice'" in out, out
        assert (await stored(config, "alice")).tokens is not None and await stored(config) is None
        code, out = await cli("logout", "crm", "--config", str(config), "--user", "alice")
        assert code == 0 and "Forgot user 'alice'" in out, out
        assert await stored(config, "alice") is None
        code, out = await cli("logout", "crm", "--config", str(config))
        assert code == 1 and "nothing to forget" in out, out


async def test_a_login_nobody_finishes_in_the_browser_ends_with_a_clear_timeout(tmp_path):
    protected = Protected()
    async with serving(protected) as url:
        config = write_config(tmp_path, url)
        code, out = await cli("login", "crm", "--config", str(config), "--timeout", "1", browser="/bin/true")
        assert code == 1 and "no sign-in came back to http://127.0.0.1:" in out and "within 1s" in out, out
        assert "--timeout" in out and await stored(config) is None


async def test_login_refuses_a_server_that_is_not_remote_or_unknown(tmp_path):
    config = tmp_path / "hub.json"
    config.write_text(json.dumps({"mcpServers": {"local": {"command": "true"}}}))
    code, out = await cli("login", "nope", "--config", str(config))
    assert code == 2 and "no server 'nope'" in out, out
    code, out = await cli("login", "local", "--config", str(config))
    assert code == 1 and "stdio server takes its credentials in 'env'" in out, out


async def test_the_status_pages_connect_signs_a_served_hub_in_through_its_own_callback(tmp_path):
    import httpx2

    from tests.support import serve_process

    protected = Protected()
    async with serving(protected) as url:
        config = {"mcpServers": {"crm": {"url": url, "startup_timeout": 10}}, "storage": {"url": "sqlite:///hub.db"}}
        async with serve_process(config, tmp_path) as served, httpx2.AsyncClient(timeout=30) as browser:
            base = served.url.removesuffix("/mcp")

            async def crm() -> dict[str, Any]:
                data = (await browser.get(f"{base}/status.json")).json()
                return {**next(s for s in data["servers"] if s["name"] == "crm"), "csrf": data.get("csrf")}

            await until(lambda: _state(crm, "NEEDS_AUTH"), timeout=20)
            page = (await browser.get(f"{base}/status")).text
            assert "Connect crm" in page and FIX in page
            pressed = await browser.post(f"{base}/status/servers/crm/connect", data={"csrf": (await crm())["csrf"]})
            assert pressed.status_code == 303 and pressed.headers["location"].startswith(f"{protected.base}/authorize")
            approved = await browser.get(pressed.headers["location"])  # the person approves at the server
            back = approved.headers["location"]
            assert back.startswith(f"{base}/status/oauth/callback/crm?")
            again = await browser.get(back)
            assert again.status_code == 303 and again.headers["location"] == "/status"
            reused = await browser.get(back)  # a code comes back once
            assert reused.status_code == 400 and "press Connect again" in reused.text
            await until(lambda: _state(crm, "READY"), timeout=20)
            async with Client(served.url) as host:
                result = await host.call_tool("crm_whoami", {})
            assert not result.is_error and result.content[0].text == "signed in to the CRM"
        assert leaked(protected, served.log.read_text()) == []


async def _state(crm: Any, state: str) -> bool:
    return (await crm())["state"] == state

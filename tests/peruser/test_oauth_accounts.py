"""A per_user OAuth server: each hub user's calls carry their own grant (``hermes-hub login NAME --user
USER``), through a served hub over real HTTP, against a protected server whose authorization server
issues tokens naming the account the person signed in with (the $BROWSER picks it) and whose tool
``account`` answers whose account a token belongs to. A user who has not signed in is told how, and is
never served through another user's grant; the status page's Connect lets any user connect their own.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.oauth_client.protected import Protected, serving
from tests.support import PROJECT, Served, as_user, serve_process, until

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
BROWSER = str(PROJECT / "tests" / "oauth_client" / "browser.py")


async def cli(served: Served, *args: str, account: str | None = None) -> tuple[int, str]:
    """A real `hermes-hub ARGS --config <the served hub's>`; a login's browser signs in as ``account``."""
    env = {**os.environ, "BROWSER": BROWSER, **({"TEST_ACCOUNT": account} if account else {})}
    with anyio.fail_after(60):
        done = await anyio.run_process([sys.executable, "-m", "hermes_hub", *args, "--config", str(served.config)],
                                       env=env, cwd=PROJECT, check=False)
    return done.returncode, done.stdout.decode() + done.stderr.decode()


async def token_of(served: Served, user: str) -> str:
    code, out = await cli(served, "token", "create", user)
    assert code == 0, out
    return out.strip().splitlines()[0]


async def account(url: str, token: str) -> tuple[bool, str]:
    async with as_user(url, token) as host:
        result = await host.call_tool("crm_account", {})
    return bool(result.is_error), " ".join(getattr(c, "text", "") for c in result.content)


async def listed(url: str, token: str) -> bool:
    """Whether the hub lists the server's tools to ``token``'s user: from their own connection, nobody else's."""
    async with as_user(url, token) as host:
        return "crm_account" in {t.name for t in (await host.list_tools()).tools}


def hub_config(tmp_path: Path, url: str, **servers: Any) -> dict[str, Any]:
    return {"mcpServers": {"crm": {"url": url, "per_user": True, "startup_timeout": 10}, **servers},
            "storage": {"url": f"sqlite:///{tmp_path / 'hub.db'}"},
            "auth": {"tokens": [{"token": "hub-token-of-root-0123456789", "user": "root", "role": "admin"}]}}


async def test_each_user_calls_through_their_own_grant_and_one_without_is_told_to_connect(tmp_path):
    protected = Protected()
    async with serving(protected) as url, serve_process(hub_config(tmp_path, url), tmp_path) as served:
        tokens = {user: await token_of(served, user) for user in ("alice", "bob", "carol")}
        assert not await listed(served.url, tokens["carol"])  # nobody has signed in yet: no list to learn from
        for user in ("alice", "bob"):  # each signs in at the CRM as their own account
            code, out = await cli(served, "login", "crm", "--user", user, "--timeout", "20", account=f"{user}@crm")
            assert code == 0 and f"for user '{user}'" in out, out
        # the hub starts a signed-in user's connection to learn what it lists: that list is hers alone
        await until(lambda: listed(served.url, tokens["alice"]), timeout=30, every=0.25)
        assert not await listed(served.url, tokens["carol"])  # never another user's listing
        assert await account(served.url, tokens["alice"]) == (False, "account of alice@crm")
        assert await account(served.url, tokens["bob"]) == (False, "account of bob@crm")
        assert await account(served.url, tokens["alice"]) == (False, "account of alice@crm")

        is_error, text = await account(served.url, tokens["carol"])  # signed in nowhere: never alice's or bob's
        assert is_error and "@crm" not in text, text
        assert text == ("server 'crm': connect your account: this server runs with each user's own account and "
                        "you have not signed in to it. Run `hermes-hub login crm --user carol` (or press Connect "
                        "crm on the hub's status page); your next call uses it")
        async with as_user(served.url, tokens["carol"]) as host:
            status = (await host.call_tool("hermes_hub_status", {})).structured_content
        crm = next(s for s in status["servers"] if s["name"] == "crm")
        assert "hermes-hub login crm --user carol" in crm["account"], crm

        code, out = await cli(served, "logout", "crm", "--user", "bob")
        assert code == 0, out
        is_error, text = await account(served.url, tokens["bob"])  # bob's running connection keeps its grant
        assert (is_error, text) == (False, "account of bob@crm")
    assert not [s for s in protected.issued if s in served.log.read_text()]


async def test_any_user_connects_their_own_account_on_the_status_page_and_only_their_own(tmp_path):
    protected = Protected()
    async with (serving(protected) as url,
                serve_process(hub_config(tmp_path, url, shared={"url": url}), tmp_path) as served,
                httpx2.AsyncClient(timeout=30) as dave_browser, httpx2.AsyncClient(timeout=30) as erin_browser):
        base = served.url.removesuffix("/mcp")
        tokens = {user: await token_of(served, user) for user in ("dave", "erin")}
        for browser, user in ((dave_browser, "dave"), (erin_browser, "erin")):
            logged_in = await browser.post(f"{base}/status/login", data={"token": tokens[user]})
            assert logged_in.status_code == 303, logged_in.text

        page = (await dave_browser.get(f"{base}/status")).text
        assert "Connect crm" in page and "hermes-hub login crm --user dave" in page
        assert "Connect shared" not in page  # the hub's shared grant acts for everyone: an admin's to give
        csrf = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        refused = await dave_browser.post(f"{base}/status/servers/crm/connect", data={"csrf": "wrong"})
        assert refused.status_code == 403 and "CSRF" in refused.text
        shared = await dave_browser.post(f"{base}/status/servers/shared/connect", data={"csrf": csrf})
        assert shared.status_code == 403 and "only admins" in shared.text

        pressed = await dave_browser.post(f"{base}/status/servers/crm/connect", data={"csrf": csrf})
        assert pressed.status_code == 303 and pressed.headers["location"].startswith(f"{protected.base}/authorize")
        approved = await dave_browser.get(pressed.headers["location"] + "&account=dave%40crm")
        back = approved.headers["location"]
        stolen = await erin_browser.get(back)  # another user's browser cannot finish dave's sign-in
        assert stolen.status_code == 403 and "started by another status-page user" in stolen.text
        done = await dave_browser.get(back)
        assert done.status_code == 303 and done.headers["location"] == "/status"
        await until(lambda: listed(served.url, tokens["dave"]), timeout=30, every=0.25)  # his connection's listing
        assert not await listed(served.url, tokens["erin"])  # is his alone
        assert await account(served.url, tokens["dave"]) == (False, "account of dave@crm")
        is_error, text = await account(served.url, tokens["erin"])  # dave's grant is his alone
        assert is_error and "hermes-hub login crm --user erin" in text, text
        assert "Connect crm" in (await erin_browser.get(f"{base}/status")).text
    assert not [s for s in protected.issued if s in served.log.read_text()]

"""The status page in a real browser (Debian's headless Chromium, driven by Playwright) against a served hub."""

from __future__ import annotations

import os
import signal

import anyio
import httpx2
import pytest

from tests.support import as_user, serve_process
from tests.web.pages import TOKENS, base_url, browser, cli, hub_config, seed_runs, store_token

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
SECONDS = 10_000  # Playwright's waits, in ms: "within a few seconds"


async def log_in(page, url: str, user: str) -> None:
    await page.goto(f"{url}/status")
    await page.fill("#token", TOKENS[user])
    await page.click("button[type=submit]")
    await page.wait_for_selector("#server-alpha", timeout=SECONDS)


async def test_the_page_renders_servers_with_their_tools_and_a_sparkline(tmp_path):
    async with serve_process(hub_config(tokens=False), tmp_path) as served, browser() as chromium:
        page = await chromium.new_page()
        await page.goto(f"{base_url(served.url)}/status")
        alpha = page.locator("#server-alpha")
        assert await alpha.get_attribute("data-state") == "READY"
        assert "green" in (await alpha.get_attribute("class") or "")
        await alpha.locator("summary").click()
        assert await alpha.locator("ul.tools").is_visible()
        assert "alpha_echo" in await alpha.locator("ul.tools").inner_text()
        assert await page.locator("#server-beta svg.spark").count() == 1
        assert "Agent runs" in await page.locator("#h-runs").inner_text()


async def test_a_killed_server_turns_red_within_seconds_without_a_reload(tmp_path):
    workdir = tmp_path / "alpha"
    async with serve_process(hub_config(tokens=False, alpha_cwd=workdir), tmp_path) as served, browser() as chromium:
        url = base_url(served.url)
        page = await chromium.new_page()
        await page.goto(f"{url}/status")
        await page.locator("#server-alpha summary").click()  # an open card stays open across updates
        await page.evaluate("window.stillTheSamePage = true")
        async with httpx2.AsyncClient(timeout=10) as http:
            alpha = next(s for s in (await http.get(f"{url}/status.json")).json()["servers"] if s["name"] == "alpha")
        workdir.rmdir()  # so it stays down
        os.kill(alpha["pid"], signal.SIGKILL)
        await page.wait_for_selector("#server-alpha.red", timeout=SECONDS)
        assert await page.evaluate("window.stillTheSamePage") is True  # updated in place, not reloaded
        assert await page.locator("#server-alpha").get_attribute("open") is not None
        assert "alpha" in (await page.locator("#server-alpha .error").inner_text())  # the error in full, with its fix
        assert await page.locator("#server-beta.green").count() == 1


async def test_login_works_and_a_wrong_token_does_not(tmp_path):
    async with serve_process(hub_config(tokens=True), tmp_path) as served, browser() as chromium:
        url = base_url(served.url)
        page = await chromium.new_page()
        await page.goto(f"{url}/status")
        assert await page.locator("#server-alpha").count() == 0
        await page.fill("#token", "not-the-right-token-0000")
        await page.click("button[type=submit]")
        assert "not valid" in await page.locator(".error").inner_text()
        assert await page.locator("#server-alpha").count() == 0
        await log_in(page, url, "alice")
        assert "alice" in await page.locator(".who").inner_text()
        cookie = next(c for c in await page.context.cookies() if c["name"] == "hermes_status")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert TOKENS["alice"] not in cookie["value"]  # a login session's random id, not the token
        assert await page.evaluate("document.cookie") == ""  # out of reach of scripts
        await page.click("text=log out")
        await page.wait_for_selector("#token", timeout=SECONDS)
        await page.context.add_cookies([cookie])  # a copy of the old cookie opens nothing any more
        await page.goto(f"{url}/status")
        assert "log in again" in await page.locator(".error").inner_text()
        assert await page.locator("#server-alpha").count() == 0


async def test_revoking_the_token_sends_its_open_page_back_to_the_login_form(tmp_path):
    async with serve_process(hub_config(tokens=True), tmp_path) as served, browser() as chromium:
        url = base_url(served.url)
        token, token_id = await store_token(served, "carol")
        page = await chromium.new_page()
        await page.goto(f"{url}/status")
        await page.fill("#token", token)
        await page.click("button[type=submit]")
        await page.wait_for_selector("#server-alpha", timeout=SECONDS)
        await cli(served, "token", "revoke", token_id)
        await page.wait_for_selector("#token", timeout=SECONDS)  # the next update finds the login over
        assert "revoked" in await page.locator(".error").inner_text()
        assert await page.locator("#server-alpha").count() == 0


async def test_after_five_wrong_tokens_the_form_says_when_to_try_again(tmp_path):
    async with serve_process(hub_config(tokens=True), tmp_path) as served, browser() as chromium:
        url = base_url(served.url)
        page = await chromium.new_page()
        await page.goto(f"{url}/status")
        for n in range(5):
            await page.fill("#token", f"guessed-token-{n}-000000")
            await page.click("button[type=submit]")
            assert "not valid" in await page.locator(".error").inner_text()
        await page.fill("#token", "guessed-token-5-000000")
        async with page.expect_response(f"{url}/status/login") as answer:
            await page.click("button[type=submit]")
        assert (await answer.value).status == 429
        assert "try again in" in await page.locator(".error").inner_text()
        assert await page.locator("#token").count() == 0  # no form to keep guessing with


async def test_another_users_runs_never_show(tmp_path):
    async with serve_process(hub_config(tokens=True), tmp_path) as served, browser() as chromium:
        url = base_url(served.url)
        runs = await seed_runs("alice", "bob")
        page = await chromium.new_page()
        await log_in(page, url, "bob")
        body = await page.locator("main").inner_text()
        assert "secret plans of bob" in body and "secret plans of alice" not in body
        await page.click("text=secret plans of bob")
        await page.wait_for_selector("text=Round 2", timeout=SECONDS)
        assert "alpha_echo" in await page.locator("main").inner_text()
        response = await page.goto(f"{url}/status/runs/{runs['alice']}")
        assert response.status == 404
        assert "secret plans of alice" not in await page.content()


async def test_actions_need_an_admin_and_the_csrf_token(tmp_path):
    async with serve_process(hub_config(tokens=True), tmp_path) as served, browser() as chromium:
        url = base_url(served.url)
        user = await chromium.new_page()
        await log_in(user, url, "bob")
        assert await user.locator("[data-action]").count() == 0
        refused = await user.evaluate("""async () => (await fetch('/status/servers/beta/restart',
            {method: 'POST', body: new URLSearchParams({csrf: 'x'})})).status""")
        assert refused == 403

        admin = await (await chromium.new_context()).new_page()
        await log_in(admin, url, "root")
        forged = await admin.evaluate("""async () => (await fetch('/status/servers/beta/restart',
            {method: 'POST', body: new URLSearchParams({csrf: 'forged'})})).status""")
        assert forged == 403
        await admin.locator("#server-beta summary").click()
        await admin.click("#server-beta [data-action=restart]")
        await admin.wait_for_selector('#server-beta[data-restarts="1"]', timeout=15_000)
        await admin.wait_for_selector("#server-beta.green", timeout=SECONDS)


BREAKS = """() => [...document.querySelectorAll("code.name")].map((el) => {
  // Each character's line (the top of its box); a line that starts higher than the one before is a break.
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  const chars = [];
  for (let node; (node = walker.nextNode());) {
    for (let i = 0; i < node.length; i++) {
      const range = document.createRange();
      range.setStart(node, i); range.setEnd(node, i + 1);
      chars.push([node.data[i], Math.round(range.getBoundingClientRect().top)]);
    }
  }
  return chars.slice(1).flatMap(([, top], i) => (top > chars[i][1] ? [chars[i][0]] : []));
})"""


async def test_at_390px_nothing_scrolls_sideways_names_wrap_after_underscores_and_the_filter_is_by_the_calls(
        tmp_path):
    prefix = "alpha_with_a_long_prefix_that_has_to_wrap"
    config = hub_config(tokens=False)
    config["mcpServers"]["alpha"]["prefix"] = prefix
    async with serve_process(config, tmp_path) as served, browser() as chromium:
        url = base_url(served.url)
        with anyio.fail_after(60):
            for text in ("hi", "a longer text"):
                await cli(served, "call", f"{prefix}_echo", "--args", f'{{"text": "{text}"}}', "--url", served.url)
        page = await chromium.new_page(viewport={"width": 390, "height": 844})
        await page.goto(f"{url}/status")
        await page.locator("#server-alpha summary").click()
        await page.wait_for_selector("table.calls code.name", timeout=SECONDS)

        assert await page.evaluate("document.documentElement.scrollWidth") <= 390
        assert await page.evaluate("[...document.querySelectorAll('.scroll')].every(s => s.scrollWidth <= "
                                   "s.clientWidth)")
        breaks = await page.evaluate(BREAKS)  # per tool name, the character before each line break
        assert any(breaks), "the long names should wrap at 390 px"
        assert {c for b in breaks for c in b} <= {"_", "-"}  # never inside a word
        form = await page.locator("#filters").bounding_box()
        table = await page.locator("table.calls").bounding_box()
        assert await page.locator("section[aria-labelledby=h-calls] #filters").count() == 1
        assert 0 <= table["y"] - (form["y"] + form["height"]) < 40  # right above the table it filters

        await page.fill("#filters input[name=tool]", "alpha")  # an update keeps what is being typed
        await page.evaluate("() => { document.getElementById('h-servers').dataset.old = '1'; }")
        await page.wait_for_function("() => !document.querySelector('#h-servers[data-old]')", timeout=SECONDS)
        assert await page.input_value("#filters input[name=tool]") == "alpha"

        async with httpx2.AsyncClient(timeout=10) as http:
            icon = await http.get(f"{url}/favicon.ico")
        assert icon.status_code == 200 and icon.headers["content-type"] == "image/x-icon"
        assert icon.content[:4] == b"\0\0\1\0"  # an ICO, shipped in the package


async def test_a_call_shows_up_at_once_through_the_event_bus_not_at_the_next_poll(tmp_path):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with serve_process(hub_config(tokens=False), tmp_path) as served, browser() as chromium:
        page = await chromium.new_page()
        await page.goto(f"{base_url(served.url)}/status")
        await page.wait_for_selector("#live[data-streaming='1']", timeout=SECONDS)
        # Fetched once since the stream opened: the next poll is 15 s away (stream.FALLBACK_SECONDS).
        await page.wait_for_selector("#live-state:text-is('live')", timeout=SECONDS)
        assert await page.locator("table.calls code.name", has_text="alpha_echo").count() == 0
        async with Client(streamable_http_client(served.url)) as host:
            await host.call_tool("alpha_echo", {"text": "hello"})
        await page.locator("table.calls code.name", has_text="alpha_echo").first.wait_for(timeout=5_000)


OVERFLOWS = """() => {
  const width = document.documentElement.clientWidth;
  const out = [];
  for (const el of document.querySelectorAll('main *')) {
    const box = el.getBoundingClientRect();
    if (!box.width || getComputedStyle(el).display === 'none') continue;
    if (box.right > width + 0.5) out.push(`${el.tagName.toLowerCase()}.${el.className} ends at ${box.right}`);
    if (['TD', 'TH', 'DD', 'DT'].includes(el.tagName) && el.scrollWidth > el.clientWidth + 1)
      out.push(`${el.tagName.toLowerCase()}.${el.className} clips ${el.scrollWidth - el.clientWidth}px`);
  }
  return out;
}"""


READ_CELLS = """(table) => [...document.querySelectorAll(`${table} tbody td`)].map(td => {
  const label = getComputedStyle(td, '::before').content;  // what a reader sees where the header was
  return (label && label !== 'none' ? JSON.parse(label) : '') + td.innerText;
})"""


async def test_at_390px_runs_schedules_and_memory_fit_and_every_column_shows(tmp_path):
    async with serve_process(hub_config(tokens=True), tmp_path) as served, browser() as chromium:
        url = base_url(served.url)
        runs = await seed_runs("root", task="summarise the quarterly planning thread and {user}'s notes from Tuesday")
        async with as_user(served.url, TOKENS["root"]) as root:
            for args in ({"task": "remind me to water the plants on the balcony before it gets dark", "every": "1d"},
                         {"task": "weekly review", "cron": "0 9 * * MON", "timezone": "Europe/Amsterdam"}):
                made = await root.call_tool("hermes_schedule_create", args)
                assert not made.is_error, made.content
            await root.call_tool("hermes_memory_remember", {"text": "the balcony plants need water daily"})
        page = await chromium.new_page(viewport={"width": 390, "height": 844})
        await log_in(page, url, "root")

        assert await page.evaluate(OVERFLOWS) == []  # nothing past the right edge, no cell cut short
        assert await page.evaluate("document.documentElement.scrollWidth") <= 390
        run = " | ".join(await page.evaluate(READ_CELLS, "table.runs"))
        for shown in ("summarise the quarterly planning thread", "answered", "rounds 2", "tokens 120+30", "up"):
            assert shown in run
        schedules = " | ".join(await page.evaluate(READ_CELLS, "table.schedules"))
        for shown in ("water the plants on the balcony before it gets dark", "user root", "every 1d", "next 20",
                      "last not yet", "cron 0 9 * * MON", "Europe/Amsterdam"):
            assert shown in schedules
        assert "1 memory" in await page.locator("section[aria-labelledby=h-memory]").inner_text()

        await page.goto(f"{url}/status/runs/{runs['root']}")  # one run, round by round
        await page.wait_for_selector("text=Round 2", timeout=SECONDS)
        assert await page.evaluate(OVERFLOWS) == []
        assert await page.evaluate("document.documentElement.scrollWidth") <= 390

"""Take the README's screenshots of the status page (light and dark): ``python -m tests.web.screenshots``.

A hub with the demo servers and one broken entry, a few calls and an agent run, seen by Chromium at a
desktop width; written to docs/status-light.png and docs/status-dark.png.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import anyio
import httpx2

from tests.support import PROJECT, demo, serve_process
from tests.web.pages import base_url, browser, seed_runs


async def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="hermes-shots-"))
    os.environ.setdefault("HERMES_DATA_DIR", str(tmp / "data"))
    config = {"mcpServers": {
        "calendar": demo("calendar", tmp / "demo"), "notes": demo("notes", tmp / "demo"),
        "reminders": demo("reminders", tmp / "demo"),
        "weather": {"command": "weather-mcp", "args": ["--units", "metric"]},  # not installed: shows a failure
    }, "auth": {"local_user": "ana"}}
    async with serve_process(config, tmp) as served, browser() as chromium:
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        async with httpx2.AsyncClient() as http, Client(streamable_http_client(served.url, http_client=http)) as c:
            for day in ("01", "02", "03"):
                await c.call_tool("calendar_query", {"start_date": f"2026-12-{day}", "end_date": f"2026-12-{day}"})
            await c.call_tool("notes_search_notes", {"query": "milk"})
            await c.call_tool("reminders_send_reminder", {"text": "call mum", "time": "tomorrow"})
        await seed_runs("ana", task="What is on my calendar this week? Remind me of anything before 9.")
        for scheme in ("light", "dark"):
            page = await chromium.new_page(color_scheme=scheme, viewport={"width": 1000, "height": 800})
            await page.goto(f"{base_url(served.url)}/status")
            await page.locator("#server-calendar summary").click()
            await page.locator("#server-weather summary").click()
            out = PROJECT / "docs" / f"status-{scheme}.png"
            await page.screenshot(path=str(out), full_page=True)
            print(out, file=sys.stderr)


if __name__ == "__main__":
    anyio.run(main)

"""The hub's own results carry text as UTF-8, not \\u escapes: readable in hosts, and cheaper in tokens."""

from __future__ import annotations

import anyio
import pytest

from hermes_hub import Hub
from hermes_hub.infra.config import parse_config

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
TITLE = "请帮我订一张去上海的票"


async def test_the_hubs_own_tool_and_resource_results_keep_chinese_as_it_was_written():
    async with Hub(parse_config({"mcpServers": {}})) as hub, hub.client() as host:
        with anyio.fail_after(10):
            made = await host.call_tool("hermes_session_create", {"title": TITLE})
            listed = await host.call_tool("hermes_session_list", {})
            resource = await host.read_resource("hub://hermes/sessions")
    for text in (made.content[0].text, listed.content[0].text, resource.contents[0].text):
        assert TITLE in text and "\\u" not in text
    assert listed.structured_content["sessions"][0]["title"] == TITLE

"""Listings are kept as the SDK served them (bench: 1,000 tools) and never outlive a catalog change."""

from __future__ import annotations

import anyio
import mcp.types as types
import pytest
from mcp import MCPError

from hermes_hub import Hub
from hermes_hub.infra.config import parse_config
from tests.support import OWN_LISTED, toy

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_remembered_listing_changes_as_soon_as_a_server_goes_away(mode):
    async with Hub(parse_config({"mcpServers": {"toy": toy()}})) as hub:
        with anyio.fail_after(30):
            assert await hub.wait_settled(30)
            async with hub.client(mode=mode) as host:
                first = {t.name for t in (await host.session.list_tools()).tools}
                again = {t.name for t in (await host.session.list_tools()).tools}
                await hub.reload(parse_config({"mcpServers": {}}))
                after = {t.name for t in (await host.session.list_tools()).tools}
    assert "toy_echo" in first and first == again
    assert after == OWN_LISTED


async def test_a_malformed_list_request_is_still_refused_once_the_listing_is_remembered():
    async with Hub(parse_config({"mcpServers": {}})) as hub, hub.client(mode="legacy") as host:
        with anyio.fail_after(30):
            await host.session.list_tools()
            with pytest.raises(MCPError) as refused:
                await host.session._dispatcher.send_raw_request("tools/list", {"cursor": 5})  # not a string
    assert refused.value.code == types.INVALID_PARAMS

"""A huge bad argument comes back to the model, and into the hub's log and audit, cut to a readable size."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client

from hermes_hub.services import audit
from hermes_hub.infra.storage import open_store
from tests.support import demo, served_hub

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def test_a_one_megabyte_bad_value_is_quoted_cut_to_the_model_the_log_and_the_audit(tmp_path):
    async with served_hub({"mcpServers": {"calendar": demo("calendar", tmp_path)}}, tmp_path) as url:
        with anyio.fail_after(30):
            async with Client(url) as host:
                result = await host.call_tool("calendar_create_event", {
                    "title": "Standup", "date": "2026-12-01", "duration_minutes": "9" * 1_048_576})
    text = result.content[0].text
    assert result.is_error and len(text) < 400, len(text)
    assert "'duration_minutes': '9999" in text and "… (1,048,576 characters in all) is not of type 'integer'" in text
    assert max(map(len, (tmp_path / "hub.log").read_text().splitlines())) < 2_000
    async with open_store() as store:  # the served hub's store: HERMES_DATA_DIR, set by tests/conftest.py
        (row,) = await audit.query(store, "t", admin=True)
    assert row.outcome == "tool_error" and len(row.error) < 400

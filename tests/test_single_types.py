"""The hub's own tools type each argument with one JSON type: single-type schema dialects (Gemini's function
declarations, OpenAI's strict mode) refuse ``"type": ["string", "number"]`` and drop the whole tool."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_hub import Hub
from hermes_hub.infra.config import parse_config

pytestmark = pytest.mark.anyio


def types_in(schema: Any, path: str = "") -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    if isinstance(schema, dict):
        if "type" in schema:
            found.append((path or "/", schema["type"]))
        for key, value in schema.items():
            found += types_in(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            found += types_in(value, f"{path}[{i}]")
    return found


async def test_every_own_tool_argument_has_one_type(tmp_path):
    config = parse_config({"mcpServers": {}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
                           "hub": {"own_tools": "all"}})
    async with Hub(config) as hub, hub.client() as host:
        tools = (await host.list_tools()).tools
    assert {"hermes_schedule_create", "hermes_schedule_update"} <= {t.name for t in tools}
    many = [f"{t.name}{path}: {kind}" for t in tools for path, kind in types_in(t.input_schema)
            if not isinstance(kind, str)]
    assert many == []


async def test_an_interval_given_as_digits_schedules_like_seconds(tmp_path):
    config = parse_config({"mcpServers": {}, "storage": {"url": f"sqlite:///{tmp_path}/hub.db"},
                           "hub": {"own_tools": "all"}})
    async with Hub(config) as hub, hub.client() as host:
        made = await host.call_tool("hermes_schedule_create", {"task": "check the build", "every": "3600"})
        words = await host.call_tool("hermes_schedule_create", {"task": "check the build", "every": "1h"})
        bad = await host.call_tool("hermes_schedule_create", {"task": "x", "every": 3600})
        listed = (await host.call_tool("hermes_schedule_list", {})).structured_content["schedules"]
    assert len(listed) == 2
    assert "'every': 3600 is not of type 'string'" in bad.content[0].text
    assert not made.is_error and not words.is_error
    assert made.structured_content["every"] == words.structured_content["every"]
    assert bad.is_error  # a number is not what the schema says: refused with the reason, nothing created

"""The detectors alone: what each finds, what it leaves, placeholders stable within a call, and a
custom pattern that would hang a backtracking engine running in linear time."""

from __future__ import annotations

import time

import mcp.types as types
import pytest

from hermes_hub.infra.config import parse_config
from hermes_hub.infra.config.guard_rules import DETECTORS, MaskSection
from hermes_hub.infra.errors import ConfigError
from hermes_hub.core.pipeline.detectors import Redactor, card_valid, cn_id_valid
from hermes_hub.core.pipeline.mask import MaskStep


def masked(text: str, *detectors: str, **patterns: str) -> str:
    return Redactor(detectors or DETECTORS, patterns).session().text(text)


@pytest.mark.parametrize("text, expected", [
    ("call +86 138-1234-5678 or 13812345678", "call [phone#1] or [phone#1]"),
    ("office 010-12345678, US (415) 555-2671", "office [phone#1], US [phone#2]"),
    ("id 11010519491231002X", "id [cn_id#1]"),
    ("card 4111 1111 1111 1111 2026", "card [card#1] 2026"),  # a year after the card stays
    ("Ann.Lee@Example.com wrote to ann.lee@example.com", "[email#1] wrote to [email#1]"),
    ("from 192.168.1.20 and 2001:db8::1", "from [ip#1] and [ip#2]"),
    ("Authorization: Bearer abc.def-123456789", "Authorization: Bearer [api_key#1]"),
])
def test_each_detector_finds_its_values_with_one_placeholder_per_value(text, expected):
    assert masked(text) == expected


@pytest.mark.parametrize("text", [
    "on 2026-01-15 at 12:30:45", "order 20261201123, ts 20260115123045", "version 2.10.3 and v1.2.3.4",
    "ISBN 978-7-111-12345-6", "id 110105194912310021 (wrong check digit)", "not a card 4111 1111 1111 1112",
    "MAC 00:1a:2b:3c:4d:5e", "10.0.0.256 is no address", "amount 13812345678.50", "build 10.0.19045.3803",
])
def test_dates_versions_order_numbers_and_near_misses_are_left(text):
    assert masked(text) == text


def test_the_checks_behind_the_ids_and_cards():
    assert cn_id_valid("11010519491231002X") and not cn_id_valid("110105194912310021")
    assert not cn_id_valid("110105194913310021")  # no 13th month
    assert card_valid("4111111111111111") and not card_valid("4111111111111112")
    assert not card_valid("9111111111111111")  # no issuer starts with 9


def test_a_custom_pattern_runs_in_linear_time_and_a_bad_one_is_refused_with_the_reason():
    evil = "a" * 50_000 + "!"
    start = time.perf_counter()
    assert masked(evil, "email", boom="(a+)+$") == evil  # catastrophic for a backtracking engine
    assert time.perf_counter() - start < 5
    with pytest.raises(ConfigError) as e:
        parse_config({"mcpServers": {}, "guards": {"mask": {"patterns": {"x": "(a)\\1"}}}}, env={})
    assert "not a regular expression RE2 accepts" in str(e.value) and "back-references" in str(e.value)


def test_structured_content_and_embedded_resources_share_the_calls_placeholders():
    step = MaskStep(MaskSection(), lambda: None, max_result_bytes=1_000_000)
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text="Ann: 13812345678"),
                 types.EmbeddedResource(type="resource", resource=types.TextResourceContents(
                     uri="file:///a.txt", text="again 138 1234 5678, mail a@example.org"))],
        structured_content={"people": [{"phone": "+86 13812345678", "depth": {"mail": "a@example.org"}}]})
    out, found = step.mask(result)
    assert out.content[0].text == "Ann: [phone#1]"
    assert out.content[1].resource.text == "again [phone#1], mail [email#1]"
    assert out.structured_content == {"people": [{"phone": "[phone#1]", "depth": {"mail": "[email#1]"}}]}
    assert found.counts == {"phone": 1, "email": 1} and found.originals["[phone#1]"] == "13812345678"

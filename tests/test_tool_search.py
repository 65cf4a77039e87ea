"""Tool search by words: misspelt words, Chinese without spaces, everyday synonyms (the bench catalog)."""

from __future__ import annotations

import json
from pathlib import Path

import mcp.types as types
import pytest

from hermes_hub.core.toolsets.lexicon import cjk_concepts
from hermes_hub.core.toolsets.search import ToolIndex
from hermes_hub.core.toolsets.typos import Typos, within_one_edit

pytestmark = pytest.mark.anyio
CATALOG = Path(__file__).resolve().parent.parent / "bench" / "tool_catalog.json"


@pytest.fixture(scope="module")
def tools() -> list[types.Tool]:
    return [types.Tool.model_validate(t) for t in json.loads(CATALOG.read_text())]


async def top(tools: list[types.Tool], query: str, limit: int = 5) -> list[str]:
    return [h.name for h in await ToolIndex().search(tools, query, limit)]


def test_a_word_one_edit_from_a_known_word_is_taken_for_it_and_short_or_far_words_are_not():
    typos = Typos(["reminder", "calendar", "directory", "note"])
    assert typos.near("remindr") == ["reminder"]  # a letter missing
    assert typos.near("calender") == ["calendar"]  # a letter wrong
    assert typos.near("direcotry") == ["directory"]  # two letters swapped
    assert typos.near("nots") == []  # too short to guess
    assert typos.near("calendars") == ["calendar"]
    assert typos.near("calandre") == []  # two edits away
    assert within_one_edit("abcd", "abdc") and not within_one_edit("abcd", "badc")


async def test_a_misspelt_request_finds_the_tool_its_words_would_have_found(tools):
    assert "reminders_list_reminders" in await top(tools, "list my remniders")
    assert "calendar_query" in await top(tools, "show my calender")


def test_chinese_concepts_are_found_longest_first_so_a_longer_word_hides_the_short_one_inside_it():
    assert "reload" in cjk_concepts("重新加载")
    assert "sum" not in cjk_concepts("重新加载")  # "加" alone means add
    assert "sum" in cjk_concepts("三加五")
    assert "directory" in cjk_concepts("文件夹") and "file" not in cjk_concepts("文件夹")  # a folder, not a file
    assert {"calendar", "remind"} <= set(cjk_concepts("日程提醒"))  # side by side: both


async def test_requests_in_everyday_words_and_in_chinese_find_tools_described_otherwise(tools):
    assert "fs_create_directory" in await top(tools, "新建一个文件夹")
    assert "hermes_hub_reload" in await top(tools, "重新加载配置")
    assert "everything_gzip-file-as-resource" in await top(tools, "compress this log")
    assert "hermes_memory_export" in await top(tools, "导出我的记忆")


def test_a_capitalised_name_inside_a_request_is_never_taken_for_a_misspelt_word(tools):
    index = ToolIndex()
    index.lexical(tools, "")  # index the catalog's words
    assert "alive" not in index.query_weights("record that Alice works with Bob")
    assert "remind" in index.query_weights("remnd me that Alice called")

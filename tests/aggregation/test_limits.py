"""What a model reads when its arguments are huge or a result is over hub.max_result_bytes."""

from __future__ import annotations

import json

import mcp.types as types

from hermes_hub.core.aggregation.arguments import ArgumentCheck
from hermes_hub.core.aggregation.truncation import fit_result, result_size

SCHEMA = {"type": "object", "properties": {"title": {"type": "string", "maxLength": 200},
                                           "count": {"type": "integer"}}, "required": ["title"]}


def test_a_one_megabyte_bad_value_is_quoted_cut_with_its_size():
    problems = ArgumentCheck("t", SCHEMA).problems({"title": "请" * 1_048_576, "count": "x" * 1_048_576})
    assert problems == [
        "'count': 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx… (1,048,576 characters in all) "
        "is not of type 'integer'",
        "'title': '" + "请" * 59 + "… (1,048,576 characters in all) is too long",
    ]


def test_a_short_bad_value_is_quoted_whole():
    assert ArgumentCheck("t", SCHEMA).problems({"title": "ok", "count": [1, 2]}) == [
        "'count': [1, 2] is not of type 'integer'"]


def test_a_bad_value_that_is_not_a_string_is_summarised_by_its_json_size():
    (problem,) = ArgumentCheck("t", SCHEMA).problems({"title": "ok", "count": list(range(100_000))})
    assert problem.startswith("'count': [0, 1, 2,") and "(688,890 characters of JSON in all)" in problem
    assert len(problem) < 200


def text_result(text: str, *, is_error: bool = False, structured: dict | None = None) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error,
                                structured_content=structured)


def test_a_cut_error_result_stays_an_error_and_says_the_tool_reported_it():
    cut = fit_result(text_result("boom " * 10_000, is_error=True), 4096)
    assert cut.is_error and result_size(cut) <= 4096
    assert cut.content[-1].text.startswith("[hermes-hub: The tool reported an error, but its result was 50,0")


def test_a_cut_success_stays_a_success_and_names_what_was_removed():
    rows = [{"id": i, "name": f"row {i}"} for i in range(5_000)]
    cut = fit_result(text_result(json.dumps(rows), structured={"rows": rows}), 20_000)
    marker = cut.content[-1].text
    assert not cut.is_error and result_size(cut) <= 20_000
    assert marker.startswith("[hermes-hub: The call succeeded (do not repeat it), but its result was ")
    kept = len(cut.structured_content["rows"])
    assert 0 < kept < 5_000 and cut.structured_content["rows"][0] == {"id": 0, "name": "row 0"}
    assert f"{5_000 - kept:,} array items of the structured content" in marker
    assert "characters of text" in marker


def test_a_result_that_fits_is_returned_unchanged():
    small = text_result("hello", structured={"a": 1})
    assert fit_result(small, 4096) is small

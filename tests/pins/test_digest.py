"""What a pin covers: the definition as the server sent it, digested canonically, diffed within bounds."""

from __future__ import annotations

import mcp.types as types

from hermes_hub.aggregation.pins import MAX_DIFF_LINES, changed_fields, definition, diff, digest, kept


def tool(**extra) -> types.Tool:
    return types.Tool(**{"name": "fetch", "description": "Fetch a page.", "input_schema": {"type": "object"}, **extra})


def test_the_digest_covers_name_description_schemas_and_annotations_but_not_the_title_or_meta():
    base = digest(definition(tool()))
    assert digest(definition(tool(title="Fetcher", _meta={"x": 1}))) == base
    assert digest(definition(tool(annotations=types.ToolAnnotations(destructive_hint=True)))) != base
    assert digest(definition(tool(output_schema={"type": "object"}))) != base
    reordered = {"description": "Fetch a page.", "inputSchema": {"type": "object"}, "name": "fetch"}
    assert digest(reordered) == base  # canonical: key order does not count


def test_a_huge_definition_is_pinned_by_its_digest_and_diffs_stay_bounded():
    huge = definition(tool(description="x" * 500_000))
    assert kept(huge)["hermes-hub"] == "a definition of 500,065 characters: only its digest is kept"
    wide = {"name": "fetch", "inputSchema": {"properties": {f"p{i}": {"type": "string"} for i in range(2000)}}}
    lines = diff({"name": "fetch"}, wide)
    assert len(lines) == MAX_DIFF_LINES + 1 and lines[-1].endswith("more lines)")
    assert changed_fields({"name": "fetch"}, wide) == ["inputSchema"]

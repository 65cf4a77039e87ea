"""JSON config files rewritten in their own style (``hermes_hub.app.cli.jsonfile``)."""

from __future__ import annotations

import json

from hermes_hub.app.cli.jsonfile import Style, render


def test_a_change_other_than_adding_servers_rewrites_the_whole_file_in_its_indent_and_line_endings():
    before = '{\r\n    "mcpServers": {\r\n        "hermes": {"command": "old"}\r\n    }\r\n}'
    new = {"mcpServers": {"hermes": {"command": "new", "args": ["serve"]}}}
    after = render(before, json.loads(before), new, "mcpServers")
    assert after == ('{\r\n    "mcpServers": {\r\n        "hermes": {\r\n            "command": "new",\r\n'
                     '            "args": [\r\n                "serve"\r\n            ]\r\n        }\r\n    }\r\n}')


def test_escaped_non_ascii_stays_escaped_and_raw_non_ascii_stays_raw():
    escaped = '{"mcpServers": {"a": {"command": "caf\\u00e9"}}}'
    raw = '{"mcpServers": {"a": {"command": "café"}}}'
    for before, expect in ((escaped, '"b": {"command": "\\u5317\\u4eac"}'), (raw, '"b": {"command": "北京"}')):
        new = {"mcpServers": {**json.loads(before)["mcpServers"], "b": {"command": "北京"}}}
        after = render(before, json.loads(before), new, "mcpServers")
        assert after.startswith(before[:-2]) and expect in after and json.loads(after) == new


def test_a_new_file_gets_two_spaces_and_a_final_newline():
    assert render(None, None, {"mcpServers": {}}, "mcpServers") == '{\n  "mcpServers": {}\n}\n'
    assert Style.of("   \n") == Style()


def test_compact_one_line_files_stay_compact():
    before = '{"mcpServers":{"a":{"command":"x"}}}'
    new = {"mcpServers": {"a": {"command": "x"}, "b": {"command": "y", "args": ["1"]}}}
    assert render(before, json.loads(before), new, "mcpServers") == \
        '{"mcpServers":{"a":{"command":"x"},"b":{"command":"y","args":["1"]}}}'

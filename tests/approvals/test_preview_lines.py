"""The preview of a call awaiting approval (``hermes_hub.core.pipeline.preview``), without a hub: every argument
by key path, shortened, hidden characters escaped, and ``Unshowable`` past its bounds."""

from __future__ import annotations

import pytest

from hermes_hub.infra.masking import MASKER
from hermes_hub.core.pipeline.preview import MAX_CALL_CHARS, Preview, Unshowable, whole


def test_nested_values_are_flattened_to_key_paths_and_every_one_is_shown():
    args = {"note": "n" * 250, "target": "/home/alice", "options": {"paths": ["/a", "/b"], "dry run": False},
            "empty": {}, "none": None, "count": 3}
    assert Preview.of(args).lines() == [
        f'note: "{"n" * 200}" … (50 more characters)', 'target: "/home/alice"', 'options.paths[0]: "/a"',
        'options.paths[1]: "/b"', 'options["dry run"]: false', "empty: {}", "none: null", "count: 3"]


def test_secrets_are_masked_before_the_preview_and_hidden_characters_are_escaped():
    masked = MASKER({"api_key": "k-1", "note": "pay\u202eevil\u200b now\nthen"})
    assert Preview.of(masked).lines() == ['api_key: "***"', 'note: "pay\\u202eevil\\u200b now\\nthen"']
    assert Preview.of({}).lines() == ["(no arguments)"]


@pytest.mark.parametrize(("args", "why"), [
    ({f"k{i}": i for i in range(51)}, "more than 50 values"),
    ({"a": [[[[[["deep"]]]]]]}, "nested deeper than 6 levels"),
    ({"k" * 201: 1}, "longer than 200 characters"),
    ({f"k{i}": "v" * 200 for i in range(40)}, "preview would run to"),
])
def test_a_call_past_a_bound_is_unshowable(args, why):
    with pytest.raises(Unshowable, match=why):
        Preview.of(args)


def test_a_whole_call_past_its_bound_is_unshowable_and_a_stored_row_of_old_is_shown_as_it_is():
    with pytest.raises(Unshowable, match="at most 1,000,000"):
        whole({"blob": "x" * MAX_CALL_CHARS})
    assert Preview.of_json('{"text": "cut at 500 …').lines() == ['arguments: {"text": "cut at 500 …']

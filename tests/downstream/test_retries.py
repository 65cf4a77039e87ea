"""Transient failures are retried only when repeating the call is safe; permanent ones never."""

from __future__ import annotations

import pytest

from tests.support import toy
from tests.downstream.test_timeouts import timed_call

pytestmark = pytest.mark.anyio


async def test_a_timed_out_call_of_a_tool_not_known_to_be_safe_is_not_repeated():
    elapsed, result, _ = await timed_call({"toy": toy(timeout=0.3, retries=1)}, "toy_sleep", {"seconds": 10})
    assert result.is_error and elapsed < 1.2  # no 1 s back-off, no second attempt
    assert "attempts" not in result.content[0].text


@pytest.mark.slow
async def test_a_timed_out_call_of_a_tool_the_config_marks_retryable_is_repeated_after_a_back_off():
    elapsed, result, _ = await timed_call({"toy": toy(timeout=0.3, retries=1, retryable=["sle*"])}, "toy_sleep",
                                          {"seconds": 10})
    assert result.is_error and elapsed > 1.5  # 0.3 s, a 1 s back-off, 0.3 s again
    assert result.content[0].text.endswith("(after 2 attempts)")


async def test_a_tool_error_is_returned_at_once_and_never_repeated():
    elapsed, result, _ = await timed_call({"toy": toy(retries=3, retryable=["*"])}, "toy_add", {"a": 1, "b": "x"})
    assert result.is_error and elapsed < 1 and "Invalid arguments" in result.content[0].text

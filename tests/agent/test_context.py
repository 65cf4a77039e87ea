"""The token budget of one model request: parts kept in order of importance, counted with a real
tokenizer so Chinese text (about a token a character) is not taken for a quarter of its size."""

from __future__ import annotations

from dataclasses import dataclass

from hermes_hub.core.agent.context import Budget, build_request, tokens

ZH = "我们下周二下午三点在公司三楼会议室讨论新产品的发布计划，请提前准备好市场调研报告和预算表。"
EN = "We will discuss the launch plan for the new product in the third-floor meeting room next Tuesday at 3pm."


@dataclass
class Said:
    role: str
    content: str


def test_chinese_counts_near_a_token_a_character_and_english_near_four_characters_a_token():
    assert tokens(ZH) >= len(ZH) * 0.5  # a character ratio of four would say 11
    assert len(EN) / 6 <= tokens(EN) <= len(EN) / 3


def test_a_tight_budget_keeps_the_newest_messages_that_fit_and_says_what_each_part_cost():
    history = [Said("user", f"{ZH} ({n})") if n % 2 == 0 else Said("assistant", f"{EN} ({n})") for n in range(12)]
    system, messages, sizes = build_request(Budget(200), "Be brief.", ["The user lives in Oslo."], "",
                                            history, "what did we plan?", [])
    assert messages[-1].content == "what did we plan?" and messages[0].role == "user"
    assert sizes["total"] <= 200 and sizes["counted_with"] == "o200k_base"
    kept = sizes["history"]["messages"]
    assert 0 < kept < len(history)  # the newest ones, until the budget is spent
    assert [m.content for m in messages[:-1]] == [h.content for h in history[len(history) - kept:]
                                                 ][-len(messages[:-1]):]
    assert "Oslo" in system and sizes["memories"] > 0

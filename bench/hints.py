"""Search hints for hosts that defer tools: what ``anthropic/searchHint`` adds to a host's own tool search.

    python -m bench.hints

A deferring host (Claude Code, Qwen Code) shows its model tool names only and loads a tool when its own
search finds it. That search is the host's code, not ours; this bench stands in for it with a plain
keyword search of the kind such hosts run: a tool scores one point for each of its words the request
holds (two for a word of its name), English words matched whole (a trailing "s" dropped), Chinese
words as substrings of the request. It runs the labelled requests of tests/fixtures/tool_queries.py
(English and Chinese, the tuning sets and the three held-out sets) over bench/tool_catalog.json's 71
tools twice in the same run: on name and description alone (the baseline), and with the hint the hub
lists each tool with. A request counts as found when one of its tools is in the top five.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import mcp.types as types

from hermes_hub.core.toolsets.deferral import search_hint
from tests.fixtures.tool_queries import HELD_OUT, HELD_OUT_2, HELD_OUT_3, QUERIES, TUNED_2

CATALOG = Path(__file__).resolve().parent / "tool_catalog.json"
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
_WORD = re.compile(r"[a-z0-9]+")
SETS = {"tuned": QUERIES, "tuned_2": TUNED_2, "held_out": HELD_OUT, "held_out_2": HELD_OUT_2,
        "held_out_3": HELD_OUT_3}


def _norm(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _terms(text: str) -> set[str]:
    text = text.lower().replace("_", " ").replace("-", " ")
    return {_norm(w) for w in _WORD.findall(text) if len(w) > 2} | set(_CJK.findall(text))


def keyword_search(tools: list[tuple[str, set[str], set[str]]], query: str, limit: int = 5) -> list[str]:
    words = {_norm(w) for w in _WORD.findall(query.lower())}
    scored = []
    for name, name_terms, terms in tools:
        def hit(term: str) -> bool:
            return term in query if _CJK.fullmatch(term) else term in words
        score = 2 * sum(hit(t) for t in name_terms) + sum(hit(t) for t in terms - name_terms)
        if score:
            scored.append((-score, name))
    return [name for _, name in sorted(scored)[:limit]]


def indexed(catalog: list[types.Tool], hinted: bool) -> list[tuple[str, set[str], set[str]]]:
    out = []
    for t in catalog:
        text = f"{t.name} {t.description or ''}"
        if hinted:
            text += " " + (search_hint(t) or "")
        out.append((t.name, _terms(t.name), _terms(text)))
    return out


def recall(tools: list[tuple[str, set[str], set[str]]], queries: list[tuple[str, set[str]]]) -> float:
    found = sum(bool(wanted & set(keyword_search(tools, q))) for q, wanted in queries)
    return found / len(queries)


async def run(quick: bool = False) -> None:
    main()


def main() -> None:
    catalog = [types.Tool.model_validate(t) for t in json.loads(CATALOG.read_text())]
    started = time.perf_counter()
    hints = [search_hint(t) for t in catalog]
    per_tool_ms = (time.perf_counter() - started) * 1000 / len(catalog)
    plain, hinted = indexed(catalog, False), indexed(catalog, True)
    print(f"search hints over {len(catalog)} tools: {per_tool_ms:.2f} ms a tool to make (once per tool), "
          f"{sum(len(h or '') for h in hints) / len(catalog):.0f} characters on average, "
          f"{sum(1 for h in hints if h)} tools with one")
    print(f"{'set':<12}{'queries':>8}{'name+description':>18}{'+ search hint':>15}{'ratio':>8}")
    total = [0, 0.0, 0.0]
    for label, queries in SETS.items():
        before, after = recall(plain, queries), recall(hinted, queries)
        total[0] += len(queries)
        total[1] += before * len(queries)
        total[2] += after * len(queries)
        print(f"{label:<12}{len(queries):>8}{before:>18.2f}{after:>15.2f}{after / max(before, 1e-9):>8.2f}")
    n, before, after = total[0], total[1] / total[0], total[2] / total[0]
    print(f"{'all':<12}{n:>8}{before:>18.2f}{after:>15.2f}{after / max(before, 1e-9):>8.2f}")
    chinese = [(q, w) for queries in SETS.values() for q, w in queries if _CJK.search(q)]
    print(f"{'chinese':<12}{len(chinese):>8}{recall(plain, chinese):>18.2f}{recall(hinted, chinese):>15.2f}")


if __name__ == "__main__":
    main()

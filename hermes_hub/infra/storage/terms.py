"""Text as the lexical index sees it: English words (stemmed by the index's porter tokenizer) and
overlapping two-character pieces of Chinese, Japanese and Korean runs, which have no spaces.

    index_text("我们明天去北京开会 about the budget")  -> '我们 们明 明天 天去 去北 北京 京开 开会 about the budget'
    match_query("Where did Caroline move from?")       -> '"caroline" OR "move"'

A question is matched by any of its content words (OR), ranked by BM25, so a question asked the way
a person asks it finds the turns that share its rare words; stop words are left out.
"""

from __future__ import annotations

import re

MAX_QUERY_TERMS = 64

_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+(?:['’][^\W_{_CJK}]+)?", re.UNICODE)
_CJK_RE = re.compile(rf"[{_CJK}]")

STOP_WORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her
here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not
now of off on once only or other our ours ourselves out over own same she should so some such than that the
their theirs them themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself yourselves also ever
s t don didn doesn isn wasn weren haven hasn hadn won wouldn shouldn couldn ll re ve d m o y ain
kind sort thing things something anything get got like likely might must shall may
""".split())
_CJK_STOP = frozenset("的 了 是 在 我 你 他 她 它 们 吗 呢 吧 啊 和 与 及 也 都 就 还 又 很 么 什 哪 谁 怎 样 个 这 那 有 没 不".split())


def _pieces(run: str) -> list[str]:
    """A run of CJK characters as overlapping bigrams (a lone character as itself)."""
    if len(run) == 1:
        return [run]
    return [run[i:i + 2] for i in range(len(run) - 1)]


def tokens(text: str) -> list[str]:
    """Lower-cased words and CJK bigrams of ``text``, in order."""
    out: list[str] = []
    for m in _TOKEN_RE.finditer(text.lower()):
        word = m.group(0)
        if _CJK_RE.match(word):
            out.extend(_pieces(word))
        else:
            out.append(word.replace("’", "'"))
    return out


def index_text(text: str) -> str:
    """What the lexical index stores for ``text``."""
    return " ".join(tokens(text))


def content_terms(text: str) -> list[str]:
    """The distinct tokens of ``text`` worth searching for, in order (no stop words)."""
    seen: dict[str, None] = {}
    for tok in tokens(text):
        if _CJK_RE.match(tok):
            if all(ch in _CJK_STOP for ch in tok):
                continue
        elif tok in STOP_WORDS or (len(tok) < 2 and not tok.isdigit()):
            continue
        seen.setdefault(tok, None)
    return list(seen)[:MAX_QUERY_TERMS]


def match_query(text: str) -> str | None:
    """An FTS5 MATCH expression: any content term of ``text``; None if it has none."""
    words = content_terms(text)
    if not words:
        return None
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)

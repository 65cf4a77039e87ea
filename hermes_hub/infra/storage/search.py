"""Search text helpers every backend shares: split a query into terms, cut a snippet around matches.

A query is whitespace-separated terms that must all appear (AND), each a case-insensitive
substring: that works for languages written without spaces (我们明天去北京开会 matches 北京) as well
as for English. Double quotes keep a phrase with spaces together: ``"new york" budget``.

    terms('"new york" 预算')            -> ['new york', '预算']
    snippet('… we meet in New York …', ['new york'])  -> '… we meet in **New York** …'
"""

from __future__ import annotations

import re

from hermes_hub.infra.errors import InvalidInput

MAX_TERMS = 16
MAX_TERM_CHARS = 200  # a longer "word" matches no message and costs the index one lookup per character
SNIPPET_CHARS = 160
MARK = "**"
_TERM_RE = re.compile(r'"([^"]+)"|(\S+)')


def terms(query: str) -> list[str]:
    """The distinct terms of ``query``; ``InvalidInput`` if there are none, too many or one too long."""
    found: dict[str, str] = {}  # lower-cased -> as written
    for m in _TERM_RE.finditer(query or ""):
        term = (m.group(1) or m.group(2)).strip().strip('"')
        if len(term) > MAX_TERM_CHARS:
            raise InvalidInput(f"a search term is {len(term):,} characters long; use words or phrases of at most "
                               f"{MAX_TERM_CHARS} characters")
        if term:
            found.setdefault(term.lower(), term)
        if len(found) > MAX_TERMS:  # said before reading the rest of a huge query
            raise InvalidInput(f"search query has more than {MAX_TERMS} terms; use at most {MAX_TERMS}")
    if not found:
        raise InvalidInput("search query is empty; pass one or more words, e.g. query='budget 北京'")
    return list(found.values())


def snippet(text: str, words: list[str], width: int = SNIPPET_CHARS) -> str:
    """About ``width`` characters of ``text`` around the first match, every match marked with ``**``."""
    pattern = re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)), re.IGNORECASE)
    first = pattern.search(text)
    start = 0
    if first and len(text) > width:
        start = max(0, min(first.start() - width // 3, len(text) - width))
        # don't cut an English word in half
        space = text.rfind(" ", max(0, start - 15), start + 1)
        if space != -1 and start > 0:
            start = space + 1
    end = min(len(text), start + width)
    window = text[start:end]
    marked = pattern.sub(lambda m: f"{MARK}{m.group(0)}{MARK}", window)
    marked = " ".join(marked.split())  # newlines and runs of spaces make poor one-line snippets
    return ("…" if start > 0 else "") + marked + ("…" if end < len(text) else "")


def like_pattern(term: str) -> str:
    """``%term%`` with LIKE wildcards escaped (use with ``ESCAPE '\\'``)."""
    return "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def fts_phrase(term: str) -> str:
    """``term`` as an FTS5 phrase literal: always a substring match under the trigram tokenizer."""
    return '"' + term.replace('"', '""') + '"'

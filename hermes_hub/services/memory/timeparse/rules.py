"""How a rule is declared and scanned, and the vocabulary English and Chinese rules share.

Each rule is its own pattern, scanned over the whole text. Every pattern begins with a literal or a
character class, so the regex engine skips in C to the places it can start; every repetition is
bounded ({1,3}+, never +), so no input makes a scan quadratic. Word edges are checked by the rule
(``bounded``): a leading look-behind would cost the skip. A text without a Latin (or Han) letter
is not scanned by the rules that need one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from hermes_hub.services.memory.timeparse.reading import Reading, TimeSpan

MAX_MENTIONS = 100  # a text naming more times than this is not about one of them
NUMBERS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}
NUMBERS.update({"a": 1, "an": 1, "a couple of": 2, "couple of": 2, "a couple": 2})
VAGUE = ("a few", "few", "several", "some", "几")  # 2 to 5
CN_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}


def alt(words: object) -> str:
    """An alternation of ``words``, longest first (so "january" is tried before "jan")."""
    return "|".join(sorted((re.escape(w).replace(r"\ ", r"\s{1,3}") for w in words), key=len, reverse=True))


def number(text: str) -> int:
    """``12``, ``twelve``, ``十二``, ``两``, ``二十一``… (``KeyError`` for anything else)."""
    t = " ".join(text.lower().split())
    if t.isdigit():
        return int(t)
    if t in NUMBERS:
        return NUMBERS[t]
    if "十" in t:
        tens, _, ones = t.partition("十")
        return (CN_DIGITS[tens] if tens else 1) * 10 + (CN_DIGITS[ones] if ones else 0)
    return CN_DIGITS[t]


LETTERS, DIGITS, CN_NUMERALS = "abcdefghijklmnopqrstuvwxyz", "0123456789", "0123456789一二两三四五六七八九十"
S = r"\s{1,3}+"  # possessive: what was matched is never re-tried, so a failing place fails at once
END = r"(?![a-z])"

Handler = Callable[[re.Match[str], Reading], TimeSpan | None]


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern[str]
    handle: Handler
    before: str  # characters that must not come right before a match (it would be inside a word)
    script: re.Pattern[str] | None  # every match has one of these characters: no need to scan a text without

    def scan(self, k: Reading) -> Iterator[tuple[re.Match[str], TimeSpan]]:
        if self.script is not None and not k.has(self.script):
            return
        at, count = 0, 0
        while count < MAX_MENTIONS and (m := self.pattern.search(k.subject, at)):
            try:
                span = self.handle(m, k) if k.bounded(m, self.before) else None
            except (ValueError, OverflowError, KeyError):  # Feb 30, year 0, 一二三 as a number
                span = None
            if span is None:  # not a time after all ("I may go"): look again one character on
                at = m.start() + 1
                continue
            yield m, span
            at, count = m.end(), count + 1


SCANS: list[Rule] = []


LATIN, HAN = re.compile("[a-z]"), re.compile("[\u4e00-\u9fff]")


def rule(pattern: str, before: str = "", script: re.Pattern[str] | None = LATIN) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        SCANS.append(Rule(re.compile(pattern), fn, before, script))
        return fn
    return register

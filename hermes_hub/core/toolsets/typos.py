"""Misspelt query words ("remnd", "calender", "directry") matched to the words a catalog knows:
every known word is filed under itself and each of its one-letter deletions, so a word one edit
away (a letter missing, extra, wrong, or two swapped) is found by a few dictionary look-ups.

    typos = Typos(["remind", "calendar"])
    typos.near("remnd")  -> ["remind"]

A word has as many deletions as letters, each nearly as long as the word, so filing or correcting
one costs its length squared: words past ``MAX_LENGTH`` are neither filed nor corrected (no real
word is that long, and one random 60,000-letter word once cost 3.5 GB).
"""

from __future__ import annotations

MIN_LENGTH = 5  # shorter words are one edit away from too many others ("note" / "node" / "notes")
MAX_LENGTH = 40  # longer than any English word; at most 40 deletions of 39 letters each


def _plain(word: str, shortest: int) -> bool:
    """A word worth filing or correcting: ASCII letters only, of a length whose deletions are cheap."""
    return shortest <= len(word) <= MAX_LENGTH and word.isascii() and word.isalpha()


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1:] for i in range(len(word))}


def within_one_edit(a: str, b: str) -> bool:
    """Damerau (optimal string alignment) distance of ``a`` and ``b`` is at most 1."""
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return short in _deletions(long_)


class Typos:
    def __init__(self, known: list[str] | None = None) -> None:
        self._filed: dict[str, set[str]] = {}
        self._known: set[str] = set()
        self.add(known or [])

    def add(self, words: list[str]) -> None:
        for w in words:
            if w in self._known or not _plain(w, MIN_LENGTH - 1):
                continue
            self._known.add(w)
            for key in _deletions(w) | {w}:
                self._filed.setdefault(key, set()).add(w)

    def __contains__(self, word: str) -> bool:
        return word in self._known

    def near(self, word: str) -> list[str]:
        """The known words one edit from ``word`` (none if it is known, short, long, or not a plain word)."""
        if word in self._known or not _plain(word, MIN_LENGTH):
            return []
        found: set[str] = set()
        for key in _deletions(word) | {word}:
            found |= self._filed.get(key, set())
        return sorted(w for w in found if within_one_edit(word, w))

"""A document's text as chunks for retrieval: cut on headings and paragraph boundaries, at most about
``MAX_CHARS`` characters, never inside a sentence (English, and Chinese or Japanese sentence ends).

    blocks = [Block(("Storage",), "Sessions live in SQLite. Set storage.url for PostgreSQL.")]
    chunk(blocks)  -> [Chunk(position=0, heading=("Storage",), text="Sessions live in SQLite. ...")]

A chunk never spans two sections (its heading path is one), so a hit can name where it sits. A
paragraph longer than ``MAX_CHARS`` is packed sentence by sentence; a single sentence longer than that
stays whole up to ``MAX_SENTENCE_CHARS`` (a table row, a code block) and only past that is cut, at a
space where there is one: that is the one cut inside a sentence, for text that has no sentence ends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_CHARS = 700
MAX_SENTENCE_CHARS = 1500
# A sentence ends at . ! ? … followed by closing quotes and a space before a capital, digit or CJK
# character (so "e.g. the" and "v1.2" do not end one), or at 。！？ with no space needed.
_END = re.compile(r"[.!?…]+[\"'”’)\]]*\s+(?=[^\s\w]*[A-Z0-9\u3040-\u30ff\u3400-\u9fff])|[。！？!?；]+[\"”’」』）)]*\s*")


@dataclass(frozen=True)
class Block:
    """One paragraph of a document under its heading path (outermost first)."""

    heading: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class Chunk:
    position: int  # 0-based, in document order
    heading: tuple[str, ...]
    text: str


def sentences(text: str) -> list[str]:
    """``text`` cut at sentence ends; joined back with nothing between, they are ``text`` again."""
    out, start = [], 0
    for m in _END.finditer(text):
        if m.end() < len(text):
            out.append(text[start:m.end()])
            start = m.end()
    out.append(text[start:])
    return [s for s in out if s]


def _cut_long(sentence: str) -> list[str]:
    """A sentence past ``MAX_SENTENCE_CHARS``, in pieces of at most that, at spaces where there are some."""
    pieces = []
    while len(sentence) > MAX_SENTENCE_CHARS:
        at = sentence.rfind(" ", MAX_SENTENCE_CHARS // 2, MAX_SENTENCE_CHARS)
        at = MAX_SENTENCE_CHARS if at == -1 else at + 1
        pieces.append(sentence[:at])
        sentence = sentence[at:]
    return [*pieces, sentence]


def _units(paragraph: str) -> list[str]:
    """A paragraph as what may not be cut: itself when short, else its sentences."""
    if len(paragraph) <= MAX_CHARS:
        return [paragraph]
    return [piece for s in sentences(paragraph) for piece in _cut_long(s)]


def chunk(blocks: list[Block]) -> list[Chunk]:
    """Pack paragraphs (or, for a long one, its sentences) into chunks of at most about ``MAX_CHARS``."""
    out: list[Chunk] = []
    current: list[str] = []
    size = 0
    heading: tuple[str, ...] = ()

    def flush() -> None:
        nonlocal current, size
        text = "".join(current).strip()
        if text:
            out.append(Chunk(len(out), heading, text))
        current, size = [], 0

    for block in blocks:
        text = block.text.strip()
        if not text:
            continue
        if block.heading != heading:
            flush()
            heading = block.heading
        pieces = _units(text)
        for n, piece in enumerate(pieces):
            sep = "\n\n" if n == 0 and current else ""
            if current and size + len(sep) + len(piece) > MAX_CHARS:
                flush()
                sep = ""
            current.append(sep + piece)
            size += len(sep) + len(piece)
    flush()
    return out

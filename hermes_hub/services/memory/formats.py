"""Document formats read as paragraphs under headings: Markdown, plain text, HTML and PDF (pypdf).

    read(b"# Setup\\n\\nRun make.", "markdown") -> Parsed(title="Setup", blocks=[Block(("Setup",), "Run make.")], ...)

``guess`` picks a format from an explicit choice, a file name, a content type or the bytes. Reading is
CPU work: callers run it in a worker thread. A PDF is read page by page (``page N`` is its heading);
a PDF without a text layer (a scan) is refused with a message saying so.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from html.parser import HTMLParser

from hermes_hub.infra.errors import InvalidInput
from hermes_hub.services.memory.chunking import Block

FORMATS = ("markdown", "text", "html", "pdf")
_SUFFIX = {".md": "markdown", ".markdown": "markdown", ".mdx": "markdown", ".txt": "text", ".text": "text",
           ".rst": "text", ".html": "html", ".htm": "html", ".xhtml": "html", ".pdf": "pdf"}
_ATX = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_SETEXT = re.compile(r"^(=+|-+)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Parsed:
    title: str  # the first heading (or <title>), "" when there is none
    blocks: list[Block]
    text: str  # the document as text, kept for reading it back


def guess(fmt: str | None, name: str = "", content_type: str = "", data: bytes = b"") -> str:
    """The format to read with: ``fmt`` if given, else by suffix, content type, then the first bytes."""
    if fmt is not None:
        if fmt not in FORMATS:
            raise InvalidInput(f"format must be one of {', '.join(FORMATS)} (got {fmt!r})")
        return fmt
    suffix = re.search(r"\.[A-Za-z]+$", name.split("?")[0].split("#")[0])
    if suffix and suffix.group(0).lower() in _SUFFIX:
        return _SUFFIX[suffix.group(0).lower()]
    ct = content_type.split(";")[0].strip().lower()
    if ct == "application/pdf" or data[:5] == b"%PDF-":
        return "pdf"
    if ct in ("text/html", "application/xhtml+xml") or re.match(rb"\s*(<!doctype html|<html)", data[:200], re.I):
        return "html"
    if ct == "text/plain":
        return "text"
    return "markdown"


def read(data: bytes | str, fmt: str) -> Parsed:
    if fmt == "pdf":
        if isinstance(data, str):
            raise InvalidInput("a PDF is given as a file or URL, not as text")
        return _pdf(data)
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if fmt == "html":
        return _html(text)
    if fmt == "text":
        return Parsed("", [Block((), p) for p in _paragraphs(text)], text)
    return _markdown(text)


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def _markdown(text: str) -> Parsed:
    blocks: list[Block] = []
    path: list[tuple[int, str]] = []  # (level, heading) outermost first
    lines: list[str] = []
    fenced = False

    def heading() -> tuple[str, ...]:
        return tuple(h for _, h in path)

    def flush() -> None:
        for p in _paragraphs("\n".join(lines)):
            blocks.append(Block(heading(), p))
        lines.clear()

    def open_heading(level: int, title: str) -> None:
        flush()
        while path and path[-1][0] >= level:
            path.pop()
        path.append((level, title.strip()))

    raw = text.split("\n")
    for n, line in enumerate(raw):
        if _FENCE.match(line):
            fenced = not fenced
            lines.append(line)
            continue
        if fenced:
            lines.append(line)
            continue
        if m := _ATX.match(line):
            open_heading(len(m.group(1)), m.group(2))
            continue
        nxt = raw[n + 1] if n + 1 < len(raw) else ""
        if line.strip() and _SETEXT.match(nxt) and (not lines or not lines[-1].strip()):
            open_heading(1 if nxt.strip()[0] == "=" else 2, line)
            raw[n + 1] = ""  # the underline is not text
            continue
        lines.append(line)
    flush()
    first = next((b.heading[0] for b in blocks if b.heading), "")
    return Parsed(first, blocks, text)


class _HTML(HTMLParser):
    BLOCKS = {"p", "div", "li", "pre", "blockquote", "tr", "dd", "dt", "section", "article", "table", "ul", "ol",
              "br", "hr", "figcaption", "main", "header", "footer", "nav", "aside"}
    SKIP = {"script", "style", "noscript", "template", "svg", "head"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self.path: list[tuple[int, str]] = []
        self.buf: list[str] = []
        self.head_level = 0  # inside <hN>
        self.skip = 0
        self.title = ""
        self.in_title = False

    def _flush(self) -> None:
        text = re.sub(r"[ \t\f\v]+", " ", "".join(self.buf)).strip()
        self.buf.clear()
        if not text:
            return
        if self.head_level:
            while self.path and self.path[-1][0] >= self.head_level:
                self.path.pop()
            self.path.append((self.head_level, " ".join(text.split())))
        else:
            self.blocks.append(Block(tuple(h for _, h in self.path), text))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        if tag in self.SKIP:
            self.skip += 1
        elif re.fullmatch(r"h[1-6]", tag):
            self._flush()
            self.head_level = int(tag[1])
        elif tag in self.BLOCKS:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in self.SKIP:
            self.skip = max(0, self.skip - 1)
        elif re.fullmatch(r"h[1-6]", tag):
            self._flush()
            self.head_level = 0
        elif tag in self.BLOCKS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title += data
        if not self.skip:
            self.buf.append(data)


def _html(text: str) -> Parsed:
    parser = _HTML()
    parser.feed(text)
    parser.close()
    parser._flush()
    title = " ".join(parser.title.split()) or next((b.heading[0] for b in parser.blocks if b.heading), "")
    plain = "\n\n".join(b.text for b in parser.blocks)
    return Parsed(title, parser.blocks, plain)


def _pdf(data: bytes) -> Parsed:
    import pypdf  # only for a PDF
    from pypdf.errors import PdfReadError

    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages]
        meta_title = (reader.metadata.title if reader.metadata else None) or ""
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        raise InvalidInput(f"this PDF cannot be read ({exc}); check it opens in a PDF viewer") from exc
    if not any(p.strip() for p in pages):
        raise InvalidInput("this PDF has no text layer (a scan?); run it through OCR first, or add its text")
    blocks = []
    for n, page in enumerate(pages, start=1):
        # PDF text has a line break per printed line: a paragraph is lines up to a blank one
        for p in _paragraphs(page):
            blocks.append(Block((f"page {n}",), " ".join(p.split())))
    return Parsed(str(meta_title), blocks, "\n\n".join(pages))

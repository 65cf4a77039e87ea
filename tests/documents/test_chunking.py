"""Documents as chunks: cut on headings and paragraphs, at most about 700 characters, never inside a
sentence (English or Chinese); Markdown, plain text, HTML and PDF read into paragraphs under headings."""

from __future__ import annotations

import re

import pytest

from hermes_hub.infra.errors import InvalidInput
from hermes_hub.services.memory import formats
from hermes_hub.services.memory.chunking import MAX_CHARS, Block, chunk, sentences


def test_chunks_follow_headings_and_never_span_two_sections():
    doc = formats.read("# Guide\n\nIntro text.\n\n## Install\n\nRun make.\n\n### Linux\n\nUse apt.\n\n## Use\n\nCall it.\n",
                       "markdown")
    chunks = chunk(doc.blocks)
    assert doc.title == "Guide"
    assert [(c.position, c.heading, c.text) for c in chunks] == [
        (0, ("Guide",), "Intro text."), (1, ("Guide", "Install"), "Run make."),
        (2, ("Guide", "Install", "Linux"), "Use apt."), (3, ("Guide", "Use"), "Call it.")]


def test_a_long_section_is_cut_between_sentences_never_inside_one():
    english = " ".join(f"Sentence number {n} says something about storage and replicas." for n in range(60))
    chinese = "".join(f"第{n}句话讲的是数据库和副本的配置。" for n in range(80))
    chunks = chunk([Block(("A",), english), Block(("B",), chinese)])
    whole = {s.strip() for text in (english, chinese) for s in sentences(text)}
    assert len(chunks) > 4 and all(len(c.text) <= MAX_CHARS for c in chunks)
    for c in chunks:  # every chunk is whole sentences
        assert {s.strip() for s in sentences(c.text)} <= whole, c.text[:80]
    assert {c.heading for c in chunks} == {("A",), ("B",)}
    assert "".join(c.text for c in chunks if c.heading == ("B",)) == chinese


def test_paragraphs_are_packed_together_up_to_the_limit():
    paragraphs = [f"Paragraph {n}. " + "Words go here. " * 8 for n in range(12)]
    chunks = chunk([Block((), p) for p in paragraphs])
    assert 1 < len(chunks) < 12 and all(len(c.text) <= MAX_CHARS for c in chunks)
    assert [p.strip() for c in chunks for p in c.text.split("\n\n")] == [p.strip() for p in paragraphs]


def test_sentence_ends_are_not_abbreviations_or_versions():
    assert sentences("Use e.g. the v1.2 release. Then restart.") == ["Use e.g. the v1.2 release. ", "Then restart."]
    assert sentences("我们明天去北京。你来吗？好的！") == ["我们明天去北京。", "你来吗？", "好的！"]


def test_a_code_fence_keeps_its_hash_lines_as_text():
    doc = formats.read("# Real\n\n```sh\n# not a heading\nmake\n```\n", "markdown")
    assert [b.heading for b in doc.blocks] == [("Real",)] and "# not a heading" in doc.blocks[0].text


def test_html_headings_and_paragraphs_without_scripts():
    html = ("<html><head><title>Hub guide</title><style>p{}</style></head><body><h1>Setup</h1>"
            "<p>Install it &amp; run.</p><script>alert(1)</script><h2>Storage</h2><ul><li>SQLite</li>"
            "<li>PostgreSQL</li></ul></body></html>")
    doc = formats.read(html, formats.guess(None, data=html.encode()))
    assert doc.title == "Hub guide"
    assert [(b.heading, b.text) for b in doc.blocks] == [
        (("Setup",), "Install it & run."), (("Setup", "Storage"), "SQLite"), (("Setup", "Storage"), "PostgreSQL")]


def tiny_pdf(lines: list[str]) -> bytes:
    """A one-page PDF with a text layer (Helvetica), built by hand with a correct xref."""
    text = "BT /F1 12 Tf 72 720 Td 14 TL " + " ".join(f"({line}) Tj T*" for line in lines) + " ET"
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> >>",
               b"<< /Length %d >>\nstream\n%s\nendstream" % (len(text), text.encode()),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (n, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_a_pdf_is_read_page_by_page():
    data = tiny_pdf(["The backup runs nightly at 02:00.", "Restore with the storage copy command."])
    assert formats.guess(None, "report.pdf") == "pdf" and formats.guess(None, data=data) == "pdf"
    doc = formats.read(data, "pdf")
    assert [b.heading for b in doc.blocks] == [("page 1",)]
    assert re.search(r"backup runs nightly at 02:00\.", doc.blocks[0].text)


def test_a_broken_pdf_or_one_without_text_says_what_to_do():
    with pytest.raises(InvalidInput, match="cannot be read"):
        formats.read(b"%PDF-1.4 garbage", "pdf")
    with pytest.raises(InvalidInput, match="no text layer"):
        formats.read(tiny_pdf([]), "pdf")
    with pytest.raises(InvalidInput, match="format must be one of"):
        formats.guess("docx")

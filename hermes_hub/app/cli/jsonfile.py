"""A JSON config file rewritten in its own style, so a diff shows only what was added.

    text = render(old_text, old_doc, new_doc, "mcpServers")

When the change only adds entries under ``key`` (how ``hermes-hub import`` and ``install`` change
hub.json and hosts' files), they are spliced into the old text after its last entry, indented like
it: every other byte stays as the user wrote it (inline arrays, key order, spacing). Any other change
is written whole in the old file's style: its indent unit (spaces or a tab; one line stays one line),
line endings, final newline and ``\\uXXXX`` escapes. A new file gets 2 spaces and a final newline.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_WS = re.compile(r"[ \t\r\n]*")
_INDENTED = re.compile(r"\n([ \t]+)\S")


@dataclass(frozen=True)
class Style:
    indent: str | None = "  "  # one level; None: the whole document on one line
    newline: str = "\n"
    final_newline: bool = True
    ascii: bool = False  # non-ASCII written as \uXXXX escapes
    spaced: bool = True  # one-line documents: ", " and ": " rather than "," and ":"

    @classmethod
    def of(cls, text: str | None) -> Style:
        if text is None or not text.strip():
            return cls()
        body = text.strip()
        found = _INDENTED.search(body.replace("\r\n", "\n"))
        return cls(indent=found.group(1) if found else None,
                   newline="\r\n" if "\r\n" in text else "\n",
                   final_newline=text.endswith("\n"),
                   ascii=bool(re.search(r"\\u[0-9a-fA-F]{4}", text)) and text.isascii(),
                   spaced=found is not None or bool(re.search(r'":\s', body)))

    def dump(self, value: Any, prefix: str = "", *, one_line: bool = False) -> str:
        """``value`` as JSON whose inner lines start with ``prefix`` (the indentation of its first line)."""
        indent = None if one_line else self.indent
        separators = (", ", ": ") if indent is None and self.spaced else (",", ":") if indent is None else (",", ": ")
        text = json.dumps(value, indent=indent, separators=separators, ensure_ascii=self.ascii)
        return text.replace("\n", self.newline + prefix)

    def document(self, doc: Any) -> str:
        return self.dump(doc) + (self.newline if self.final_newline else "")


def render(old_text: str | None, old: dict[str, Any] | None, new: dict[str, Any], key: str) -> str:
    """The text of ``new``: ``old_text`` with the entries added under ``key`` spliced in when that is the
    whole change, else ``new`` written in ``old_text``'s style."""
    style = Style.of(old_text)
    if old_text is not None and old is not None:
        spliced = _splice(old_text, old, new, key, style)
        if spliced is not None and json.loads(spliced) == new:  # a wrong splice is never written
            return spliced
    return style.document(new)


def _splice(text: str, old: dict[str, Any], new: dict[str, Any], key: str, style: Style) -> str | None:
    top = _WS.match(text).end()
    if list(new)[: len(old)] != list(old) or any(new[k] != old[k] for k in old if k != key):
        return None
    if key not in old:  # the key itself is new: add it to the top-level object
        if list(new) != [*old, key]:
            return None
        return _insert(text, top, {key: new[key]}, style)
    before, after = old[key], new[key]
    if not (isinstance(before, dict) and isinstance(after, dict)) or list(after)[: len(before)] != list(before) \
            or any(after[k] != before[k] for k in before):
        return None
    members, _ = _members(text, top)
    start = next(s for k, _, s, _ in members if k == key)
    return _insert(text, start, {k: after[k] for k in list(after)[len(before):]}, style)


def _members(text: str, start: int) -> tuple[list[tuple[str, int, int, int]], int]:
    """The members of the object whose ``{`` is at ``start``: (key, key start, value start, value end),
    and the index of its ``}``. ``text`` is valid JSON (it was parsed before)."""
    decoder = json.JSONDecoder()
    out = []
    i = _WS.match(text, start + 1).end()
    while text[i] != "}":
        key_start = i
        key, i = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
        i = _WS.match(text, _WS.match(text, i).end() + 1).end()  # past ':'
        _, end = decoder.raw_decode(text, i)
        out.append((key, key_start, i, end))
        i = _WS.match(text, end).end()
        if text[i] == ",":
            i = _WS.match(text, i + 1).end()
    return out, i


def _insert(text: str, start: int, added: dict[str, Any], style: Style) -> str | None:
    """``text`` with ``added`` appended to the members of the object whose ``{`` is at ``start``."""
    if not added:
        return text
    members, close = _members(text, start)
    if not members:  # {} (or { }): write the object whole, indented like the line it is on
        line = text.rfind("\n", 0, start) + 1
        prefix = re.match(r"[ \t]*", text[line:start]).group()  # type: ignore[union-attr]
        return text[:start] + style.dump(added, prefix) + text[close + 1:]
    _, key_start, _, end = members[-1]
    line = text.rfind("\n", 0, key_start) + 1
    prefix = text[line:key_start]
    if style.indent is None or line == 0 or prefix.strip():  # on one line with its neighbours
        gap = ", " if style.spaced else ","
        colon = ": " if style.spaced else ":"
        return text[:end] + "".join(f"{gap}{json.dumps(k, ensure_ascii=style.ascii)}{colon}{style.dump(v, one_line=True)}"
                                    for k, v in added.items()) + text[end:]
    entries = "".join(f",{style.newline}{prefix}{json.dumps(k, ensure_ascii=style.ascii)}: {style.dump(v, prefix)}"
                      for k, v in added.items())
    return text[:end] + entries + text[end:]

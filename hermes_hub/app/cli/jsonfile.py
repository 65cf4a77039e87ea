"""A JSON config file rewritten in its own style, so a diff shows only what was added.

    text = render(old_text, old_doc, new_doc, "mcpServers")

When the change only adds entries under ``key`` (how ``hermes-hub import`` and ``install`` change
hub.json and hosts' files), they are spliced into the old text after its last entry, indented like
it: every other byte stays as the user wrote it (inline arrays, key order, spacing). Any other change
is written whole in the old file's style: its indent unit (spaces or a tab; one line stays one line),
line endings, final newline and ``\\uXXXX`` escapes. A new file gets 2 spaces and a final newline.

A JSON-with-comments file (Zed's settings.json: ``//`` and ``/* */`` comments, trailing commas) is read
through ``blanked``, which turns each comment and trailing comma into spaces of the same length, so the
offsets found in it are the original's and entries are spliced into the text with its comments
(``render(..., comments=True)``); a change that cannot be spliced is refused rather than written without them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_WS = re.compile(r"[ \t\r\n]*")
# a string (kept), a comment or a comma before a closing bracket (both blanked)
_JSONC = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/|,(?=(?:\s|//[^\n]*|/\*.*?\*/)*[}\]])', re.S)


class Uncommented(ValueError):
    """The change cannot be made in the file's text without losing its comments."""


def blanked(text: str) -> str:
    """``text`` with its comments and trailing commas as spaces (newlines kept): plain JSON, same offsets."""
    def blank(m: re.Match[str]) -> str:
        found = m.group()
        return found if found.startswith('"') else re.sub(r"[^\n]", " ", found)
    return _JSONC.sub(blank, text)
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


def render(old_text: str | None, old: dict[str, Any] | None, new: dict[str, Any], key: str,
           comments: bool = False) -> str:
    """The text of ``new``: ``old_text`` with the entries added under ``key`` spliced in when that is the
    whole change, else ``new`` written in ``old_text``'s style. With ``comments`` (a JSON-with-comments
    file) a change that cannot be spliced raises ``Uncommented``."""
    style = Style.of(old_text)
    if old_text is not None and old is not None:
        plain = blanked(old_text) if comments else old_text
        if comments and (above := _above_close(old_text, plain, old, new, key, style)) is not None:
            return above
        spliced = _splice(plain, old, new, key, style)
        if spliced is not None:
            if comments:  # the same insertion into the text with its comments: the offsets are the same
                at, added = _cut(plain, spliced), len(spliced) - len(plain)
                spliced = old_text[:at] + spliced[at:at + added] + old_text[at:]
            if json.loads(blanked(spliced) if comments else spliced) == new:  # a wrong splice is never written
                return spliced
        if comments and old_text.strip():
            raise Uncommented("only adding an entry keeps this file's comments")
    return style.document(new)


def _above_close(text: str, plain: str, old: dict[str, Any], new: dict[str, Any], key: str,
                 style: Style) -> str | None:
    """JSON with comments: the entries added under ``key`` on lines of their own above its closing brace,
    so a comment after the last entry stays with it (a comma added after that entry where it has none)."""
    if key not in old or not isinstance(old[key], dict) or not old[key] or style.indent is None:
        return None
    before, after = old[key], new.get(key)
    if (not isinstance(after, dict) or list(after)[: len(before)] != list(before) or any(after[k] != before[k] for k in before)
            or {k: v for k, v in new.items() if k != key} != {k: v for k, v in old.items() if k != key}):
        return None
    members, _ = _members(plain, _WS.match(plain).end())
    start = next(s for k, _, s, _ in members if k == key)
    inner, close = _members(plain, start)
    _, key_start, _, end = inner[-1]
    line = text.rfind("\n", 0, key_start) + 1
    close_line = text.rfind("\n", 0, close) + 1
    prefix = text[line:key_start]
    if prefix.strip() or text[close_line:close].strip() or close_line <= end:
        return None  # not one entry a line with the brace on its own
    comma = "" if text[end:close].lstrip().startswith(",") else ","
    added = "".join(f"{prefix}{json.dumps(k, ensure_ascii=style.ascii)}: {style.dump(v, prefix)},{style.newline}"
                    for k, v in list(after.items())[len(before):])
    out = text[:end] + comma + text[end:close_line] + added + text[close_line:]
    return out if json.loads(blanked(out)) == new else None


def _cut(before: str, after: str) -> int:
    """Where ``after`` first differs from ``before`` (a splice inserts at one place)."""
    n = 0
    for a, b in zip(before, after):
        if a != b:
            break
        n += 1
    return n


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

"""What the person asked for a yes sees of the call: every argument the yes covers, each value masked and
shortened to enough to judge, and the whole call one step away.

    shown = Preview.of(masker(arguments))   # Unshowable: the call is refused, nobody is asked
    shown.lines()   # ['note: "Tidy up the shared folder…" … (9,812 more characters)', 'target: "/home/alice"']
    shown.text()    # the lines, one per argument, as the elicitation, the status page and the CLI show them

A yes covers the whole call (its digest, ``approvals.digest_of``), so the preview leaves no argument
out: nested objects and lists are flattened to key paths (``options.paths[0]``), one line each, and a
long value shows its first ``VALUE_CHARS`` characters and how many more there are; the whole masked
call is one step away (``hermes-hub approvals show ID``, ``/status/approvals/ID``). Characters that
would hide or reorder text (controls, zero-width and bidirectional marks) are shown escaped.

A call that cannot be shown so (more than ``MAX_ENTRIES`` values, nested deeper than ``MAX_DEPTH``, a
key path past ``MAX_PATH_CHARS``, a preview past ``MAX_PREVIEW_CHARS`` or a whole call past
``MAX_CALL_CHARS``) is ``Unshowable``: the approval step refuses it rather than ask for a yes to
something the person cannot see.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from hermes_hub.infra.errors import InvalidInput

VALUE_CHARS = 200  # of each value, enough to judge it; the rest is one step away
MAX_ENTRIES = 50  # values (leaves) in one call
MAX_DEPTH = 6  # levels of nesting below the arguments
MAX_PATH_CHARS = 200  # of one key path
MAX_PREVIEW_CHARS = 6_000  # of the whole preview
MAX_CALL_CHARS = 1_000_000  # of the whole masked call, kept for `approvals show`
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
_HIDDEN = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))


class Unshowable(InvalidInput):
    """The call cannot be shown faithfully to the person asked, so it is not asked for."""


@dataclass(frozen=True)
class Entry:
    """One value of the call: its key path, the start of its JSON, and how many characters are not shown."""

    path: str
    value: str
    more: int = 0

    def line(self) -> str:
        cut = f" … ({self.more:,} more characters)" if self.more else ""
        return f"{self.path}: {self.value}{cut}"


@dataclass(frozen=True)
class Preview:
    entries: tuple[Entry, ...]

    @classmethod
    def of(cls, masked: dict[str, Any]) -> Preview:
        """The preview of ``masked`` (the call's arguments, already masked); ``Unshowable`` as above."""
        entries: list[Entry] = []
        if masked:
            _walk(masked, "", 0, entries)
        preview = cls(tuple(entries))
        if (size := sum(len(e.line()) + 2 for e in entries)) > MAX_PREVIEW_CHARS:
            raise Unshowable(f"the call's preview would run to {size:,} characters (at most {MAX_PREVIEW_CHARS:,} "
                             f"are shown to the person who approves it)")
        return preview

    @classmethod
    def of_json(cls, stored: str) -> Preview:
        """The preview of an approval's stored call (its masked arguments as JSON); a row written before
        whole calls were kept holds a cut preview, shown as it is."""
        try:
            value = json.loads(stored)
        except ValueError:
            return cls((Entry("arguments", _visible(stored)),))
        try:
            return cls.of(value) if isinstance(value, dict) else cls((Entry("arguments", _visible(stored)),))
        except Unshowable:
            return cls((Entry("arguments", _visible(stored[:VALUE_CHARS]), max(0, len(stored) - VALUE_CHARS)),))

    def lines(self) -> list[str]:
        return [e.line() for e in self.entries] or ["(no arguments)"]

    def text(self, sep: str = "; ") -> str:
        return sep.join(self.lines())


def whole(masked: dict[str, Any]) -> str:
    """The whole masked call as it is kept with its approval (JSON); ``Unshowable`` past ``MAX_CALL_CHARS``."""
    text = json.dumps(masked, ensure_ascii=False, default=str)
    if len(text) > MAX_CALL_CHARS:
        raise Unshowable(f"the call's arguments are {len(text):,} characters; at most {MAX_CALL_CHARS:,} can be "
                         f"kept for the person who approves it to read")
    return text


def refusal(tool: str, reason: Unshowable) -> str:
    """The sentence a caller reads when its call is refused for being unshowable."""
    return (f"Not run: the call to '{tool}' needs a person's approval, but {reason} and it cannot be shown to "
            f"them in full, so it was not asked for and did not run. Call it with fewer or smaller arguments "
            f"(at most {MAX_ENTRIES} values, nested at most {MAX_DEPTH} levels), e.g. one item per call.")


def _walk(value: Any, path: str, depth: int, out: list[Entry]) -> None:
    if depth > MAX_DEPTH:
        raise Unshowable(f"its argument {path or 'arguments'} is nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict) and value:
        for key, inner in value.items():
            _walk(inner, _join(path, str(key)), depth + 1, out)
        return
    if isinstance(value, list | tuple) and value:
        for i, inner in enumerate(value):
            _walk(inner, f"{path}[{i}]", depth + 1, out)
        return
    if len(out) >= MAX_ENTRIES:
        raise Unshowable(f"it holds more than {MAX_ENTRIES} values")
    out.append(_entry(path or "arguments", value))


def _join(path: str, key: str) -> str:
    step = key if _NAME.fullmatch(key) else f"[{_visible(json.dumps(key[:MAX_PATH_CHARS + 1], ensure_ascii=False))}]"
    joined = (f"{path}.{step}" if path and not step.startswith("[") else f"{path}{step}") if path else step
    if len(joined) > MAX_PATH_CHARS:
        raise Unshowable(f"the key path {joined[:60]}… is longer than {MAX_PATH_CHARS} characters")
    return joined


def _entry(path: str, value: Any) -> Entry:
    if isinstance(value, str):
        shown, more = value[:VALUE_CHARS], max(0, len(value) - VALUE_CHARS)
        return Entry(path, _visible(json.dumps(shown, ensure_ascii=False)), more)
    text = json.dumps(value, ensure_ascii=False, default=str)  # a number, true/false/null, {} or []
    return Entry(path, _visible(text[:VALUE_CHARS]), max(0, len(text) - VALUE_CHARS))


def _visible(text: str) -> str:
    """``text`` with every character that hides or reorders what a person reads written as an escape."""
    if text.isprintable():
        return text
    return "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) in _HIDDEN else c for c in text)

"""What the masking step finds in a result: named detectors and custom patterns, in linear time.

    redactor = Redactor(("phone", "card"), {"order": "ORD-[0-9]{8}"})
    found = redactor.session()                       # one per call: its placeholders are stable
    found.text("call 138 1234 5678 or +86 138-1234-5678 about ORD-20261201")
    # 'call [phone#1] or [phone#2] about [order#1]';  found.originals == {"[phone#1]": "138 1234 5678", ...}

A detector is a candidate pattern run by RE2 (linear time, no backtracking) and a check in Python of
each candidate, which is bounded in length: the boundaries RE2 cannot look at (no look-arounds) and
what makes a number one (a Chinese resident ID's check digit, GB 11643 / ISO 7064 MOD 11-2 and its
birth date; a card's Luhn sum and issuer prefix; an IP address that parses; a phone number's shape).
A candidate that fails whole is tried in its parts split at separators, so "138 1234 5678 2026" still
yields the phone. ``api_key`` reuses ``hermes_hub.infra.masking``'s formats (those are written for linear
time in Python's ``re``) and its ``Bearer``/``Basic`` credentials, keeping the scheme word.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

import re2

from hermes_hub.infra.masking import BEARER, FORMATS

Check = Callable[[str], bool]
_SEP = re.compile(r"[ ().-]+")
_PART = re.compile(r"[^ .-]+")  # the groups of a number written with separators
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_CN_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_CN_CHECK = "10X98765432"
_CARD_PREFIX = re.compile(r"4|5[1-5]|2[2-7]|3[47]|3[0689]|35|62|60|65|8[18]")
# The shapes a phone candidate is checked against: short strings, fixed patterns (no backtracking blow-up)
_NON_DIGIT = re.compile(r"[^0-9]+")
_CN_MOBILE = re.compile(r"(?:86)?1[3-9][0-9]{9}")
_CN_LANDLINE = re.compile(r"0[0-9]{2,3}[ -][0-9]{7,8}|\(0[0-9]{2,3}\) ?[0-9]{7,8}")
_NATIONAL = re.compile(r"\([0-9]{3}\) ?[0-9]{3}[ .-][0-9]{4}|[0-9]{3}([ .-])[0-9]{3}\1[0-9]{4}")


def _re2(pattern: str) -> object:
    options = re2.Options()
    options.log_errors = False
    return re2.compile(pattern, options)


def cn_id_valid(value: str) -> bool:
    """A Chinese resident ID number (18 characters): region, a real birth date, the check digit."""
    if len(value) != 18 or not value[:17].isdigit() or not 11 <= int(value[:2]) <= 82:
        return False
    try:
        born = date(int(value[6:10]), int(value[10:12]), int(value[12:14]))
    except ValueError:
        return False
    if not 1900 <= born.year <= 2100:
        return False
    total = sum(int(d) * w for d, w in zip(value[:17], _CN_WEIGHTS, strict=True))
    return _CN_CHECK[total % 11] == value[17].upper()


def luhn_valid(digits: str) -> bool:
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


def card_valid(value: str) -> bool:
    """13-19 digits, one kind of separator at most, a known issuer prefix, the Luhn sum."""
    digits = value.replace(" ", "").replace("-", "")
    seps = {c for c in value if c in " -"}
    return (13 <= len(digits) <= 19 and digits.isdigit() and len(seps) <= 1 and len(set(digits)) > 1
            and _CARD_PREFIX.match(digits) is not None and luhn_valid(digits))


def phone_valid(value: str) -> bool:
    """International (+ and 8-15 digits), Chinese mobile (1[3-9] and 11 digits, with or without 86),
    Chinese landline (0, area code, a separator, 7-8 digits), or 3-3-4 national groups."""
    digits = _digits(value)
    groups = [g for g in _SEP.split(value.lstrip("+")) if g]
    if value.startswith("+"):
        return 8 <= len(digits) <= 15 and not _dotted_only(value)
    if _CN_MOBILE.fullmatch(digits) and not _dotted_only(value):
        return all(len(g) in (2, 3, 4, 11, 13) for g in groups)
    return bool(_CN_LANDLINE.fullmatch(value) or _NATIONAL.fullmatch(value))


def _dotted_only(value: str) -> bool:  # 1.2.3.4 is a version or an address, not a phone number
    return "." in value and not any(c in value for c in " -()")


def ipv4_valid(value: str) -> bool:
    try:
        ipaddress.IPv4Address(value)
    except ValueError:
        return False
    return True


def ipv6_valid(value: str) -> bool:
    if "::" not in value and value.count(":") != 7:
        return False  # 12:30:45 is a time, 00:1a:2b:3c:4d:5e a MAC address
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True


def _digits(value: str) -> str:
    return _NON_DIGIT.sub("", value)


def _phone_key(value: str) -> str:  # +86 138-1234-5678 and 13812345678 are one number
    digits = _digits(value)
    return digits[2:] if len(digits) == 13 and digits.startswith("861") else digits


@dataclass(frozen=True)
class Detector:
    """A candidate pattern, the check of a candidate, the characters that may not touch it, and the
    key under which two spellings of one value share a placeholder."""

    name: str
    pattern: str
    check: Check
    glued: frozenset[str] = _ALNUM  # a candidate next to one of these is part of something longer
    key: Callable[[str], str] = str
    split: bool = False  # try the parts of a failed candidate, split at separators
    # what a text holds whenever its check can pass: fewer digits, or no ``needs``, and RE2 is not run
    min_digits: int = 0
    needs: str = ""
    program: object = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "program", _re2(self.pattern))

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        for m in self.program.finditer(text):  # type: ignore[attr-defined]
            start, end = m.span()
            yield from self._valid(text, start, end)

    def _valid(self, text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
        if self._fits(text, start, end):
            yield start, end
            return
        if not self.split:
            return
        parts = [m.span() for m in _PART.finditer(text, start, end)]
        i = 0
        while i < len(parts):  # a candidate is short (its pattern bounds it): this loop stays small
            for j in range(len(parts) - 1, i - 1, -1):
                if self._fits(text, parts[i][0], parts[j][1]):
                    yield parts[i][0], parts[j][1]
                    i = j
                    break
            i += 1

    def _fits(self, text: str, start: int, end: int) -> bool:
        if start > 0 and text[start - 1] in self.glued or end < len(text) and text[end] in self.glued:
            return False
        if end + 1 < len(text) and text[end] == "." and text[end + 1].isdigit():
            return False  # 1.2.3.4.5: a version
        return self.check(text[start:end])


# Only the shapes phone_valid takes, so that digit-rich text (orders, dates, amounts) yields few candidates
_PHONE = (r"\+[0-9][0-9 ().-]{6,20}[0-9]|(?:86)?1[3-9][0-9][ -]?[0-9]{4}[ -]?[0-9]{4}|0[0-9]{2,3}[ -][0-9]{7,8}"
          r"|\(0?[0-9]{2,3}\) ?[0-9]{3,8}(?:[ .-][0-9]{4})?|[0-9]{3}[ .-][0-9]{3}[ .-][0-9]{4}")
DETECTORS: dict[str, Detector] = {d.name: d for d in (
    Detector("email", r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,6}",
             lambda v: v.rsplit(".", 1)[-1].isalpha() and len(v.rsplit(".", 1)[-1]) >= 2,
             frozenset(), key=str.lower, needs="@"),
    Detector("cn_id", r"[1-9][0-9]{16}[0-9Xx]", cn_id_valid, key=str.upper, min_digits=17),
    Detector("card", r"[0-9](?:[ -]?[0-9]){12,18}", card_valid, _ALNUM | {"-"}, key=_digits, split=True,
             min_digits=13),
    Detector("ipv4", r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}", ipv4_valid, _ALNUM | {"."}, min_digits=4, needs="."),
    Detector("ipv6", r"[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}", ipv6_valid, _ALNUM | {":"}, key=str.lower,
             needs=":"),
    Detector("phone", _PHONE, phone_valid, _ALNUM | {"-", "/", ":"}, key=_phone_key,
             split=True, min_digits=8),  # the fewest digits phone_valid takes (an international number)
)}
# The order a text is scanned in: the most specific first, so a card is not taken for a phone number;
# custom patterns run after the API keys and before the rest.
ORDER = ("api_key", "email", "cn_id", "card", "ip", "phone")
# A key format is searched for only in a text holding its literal start (``in`` is far cheaper than a
# scan); a format not listed here is always searched for.
_KEY_STARTS = {"openai_anthropic": ("sk-",), "github": ("gh", "github_pat_"), "aws_access_key_id": ("AKIA", "ASIA"),
               "slack": ("xox", "xapp"), "hermes": ("hh_", "hha_", "hhr_"), "jwt": ("eyJ",),
               "stripe": ("sk_", "rk_"), "google": ("AIza",), "private_key": ("-----BEGIN",)}
_API_KEYS = tuple((_KEY_STARTS.get(name), re.compile(p)) for name, p in FORMATS.items())
_ANY_START = re.compile("|".join(re.escape(s) for starts in _KEY_STARTS.values() for s in starts))
_NO_DIGITS = str.maketrans("", "", "0123456789")
_BEARER_START = re.compile("bearer|basic", re.IGNORECASE)


class Redactor:
    """The detectors and patterns of one ``guards.mask``; ``session()`` masks the strings of one call."""

    def __init__(self, detectors: Sequence[str], patterns: Mapping[str, str] | None = None) -> None:
        self.detectors = tuple(d for d in ORDER if d in detectors)
        self.patterns = {name: _re2(p) for name, p in (patterns or {}).items()}
        # (placeholder kind, detector) in scan order, after the API keys and the custom patterns
        self.scans = tuple((name, DETECTORS[part]) for name in self.detectors if name != "api_key"
                           for part in (("ipv4", "ipv6") if name == "ip" else (name,)))

    def session(self) -> Found:
        return Found(self)


@dataclass
class Found:
    """What one call's strings held: placeholder -> original, and how many of each kind."""

    redactor: Redactor
    originals: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    _seen: dict[tuple[str, str], str] = field(default_factory=dict)

    def placeholder(self, kind: str, value: str, key: Callable[[str], str] = str) -> str:
        ident = (kind, key(value))
        if (known := self._seen.get(ident)) is not None:
            return known
        self.counts[kind] = self.counts.get(kind, 0) + 1
        made = f"[{kind}#{self.counts[kind]}]"
        self._seen[ident], self.originals[made] = made, value
        return made

    def text(self, text: str) -> str:
        if "api_key" in self.redactor.detectors:  # first: a key's letters and digits hold anything
            text = self._api_keys(text)
        for name, program in self.redactor.patterns.items():  # then the configured ones: they know the data
            text = self._replace(text, ((m.start(), m.end()) for m in program.finditer(text)  # type: ignore[attr-defined]
                                        if m.end() > m.start()), name)
        digits = len(text) - len(text.translate(_NO_DIGITS))  # placeholders put in later add none a check takes
        for kind, d in self.redactor.scans:
            # a text with fewer digits (or without the character) than a check needs is not scanned
            if digits >= d.min_digits and (not d.needs or d.needs in text):
                text = self._replace(text, d.spans(text), kind, d.key)
        return text

    def _replace(self, text: str, spans: Iterator[tuple[int, int]], kind: str,
                 key: Callable[[str], str] = str) -> str:
        out, at = [], 0
        for start, end in spans:
            if start < at:
                continue
            out += [text[at:start], self.placeholder(kind, text[start:end], key)]
            at = end
        if not out:
            return text
        out.append(text[at:])
        return "".join(out)

    def _api_keys(self, text: str) -> str:
        started = _ANY_START.search(text) is not None  # one scan for every format's literal start
        for starts, pattern in _API_KEYS:
            if starts is None or started and any(s in text for s in starts):
                text = pattern.sub(lambda m: self.placeholder("api_key", m.group()), text)
        if _BEARER_START.search(text) is None:
            return text
        return BEARER.sub(lambda m: m.group("lead") + self.placeholder("api_key", m.group()[len(m.group("lead")):]),
                          text)

"""Masking: what the hub keeps about a call (audit rows, session history, traces) holds no secret.

    masker = Masker(("email",))
    masker({"api_key": "k-1", "note": "my password is hunter2", "to": "ann@example.com"})
    # {'api_key': '***', 'note': 'my password is ***', 'to': '***'}

Two rules, applied to any JSON value at any depth:

- a value under a secret-looking key (token, password, secret, key, authorization, cookie…, matched on
  whole words of the key, so ``api_key`` and ``accessToken`` are masked but ``keyword`` and
  ``max_tokens`` are not) becomes ``***``;
- inside every string, well-known credential formats (``FORMATS``: OpenAI and Anthropic keys, GitHub
  and Slack tokens, AWS access key ids, the hub's own ``hh_`` tokens and its OAuth ``hha_``/``hhr_`` ones,
  JSON Web Tokens, Stripe secret and restricted keys, Google API keys, private key blocks, the password
  of a ``scheme://user:password@host`` URL, ``Bearer``/``Basic`` credentials) and phrases that hand a
  secret over (``PHRASE``: "my password is …", "api key = …", ``aws_secret_access_key: …``) become
  ``***``, then the configured patterns (``storage.audit_mask_patterns``: regexes or the presets
  ``email`` and ``phone``).

With ``guards.mask`` set, its detectors (``detect``) then replace what they find in every string with a
placeholder, as they do in results: one setting for both. The marker is always ``***``, whatever the
secret's length. Masking applies to the copy that is kept: the tool is called with the real arguments.

Every built-in pattern runs in linear time: each starts at a literal prefix or a keyword, every
quantifier that something follows is bounded, and an unbounded run is only ever the last part of a
pattern (nothing after it to backtrack for). ``limit`` also bounds the work: a string is cut to
``limit`` plus a margin before it is scanned.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from hermes_hub.infra.errors import InvalidInput

MASK = "***"
SECRET_WORDS = frozenset({
    "token", "password", "passwd", "pwd", "passphrase", "secret", "key", "apikey", "authorization", "auth",
    "cookie", "credential", "credentials", "otp", "pin", "signature",
})
PRESETS = {
    "email": r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
    # 8 to 15 digits with optional + and separators; an ISO date (2026-01-15) is not a phone number
    "phone": r"(?<![\w+])(?!\d{4}-\d\d-\d\d\b)\+?\d(?:[\s().-]?\d){7,14}(?!\w)",
}
_START = r"(?<![A-Za-z0-9])"  # a prefix counts at the start of a word only: "task-…" holds no "sk-" key
FORMATS = {
    # OpenAI (sk-proj-, sk-svcacct-, sk-admin-, sk-None-) and Anthropic (sk-ant-api03-…) keys, found even
    # glued to a word (their prefixes are distinctive enough); legacy OpenAI keys (sk- and 48 letters or
    # digits, no hyphen, so "sk-learn-style" prose is kept) only at the start of a word
    "openai_anthropic": r"sk-(?:proj|svcacct|admin|ant|None)-[A-Za-z0-9_-]{16,}|" + _START + r"sk-[A-Za-z0-9]{20,}",
    "github": _START + r"(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
    "aws_access_key_id": _START + r"(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])",
    "slack": _START + r"(?:xox[abeoprs]|xapp)-[A-Za-z0-9-]{10,}",
    # identity.new_token (hh_) and the authorization server's access and refresh tokens (hha_, hhr_):
    # the prefix and 43 url-safe characters
    "hermes": _START + r"hh[ar]?_[A-Za-z0-9_-]{20,}",
    # a JSON Web Token: a base64url header that starts as JSON does ('{"' is "eyJ"), a payload, a signature
    # (empty for alg "none"); a part starts where no base64url character precedes it, so runs never overlap
    "jwt": r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*",
    "stripe": _START + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",  # secret and restricted keys
    "google": _START + r"AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])",  # a Google API key: AIza + 35 characters
    # the whole block, header to footer (an encrypted one's "Proc-Type:" lines included); no '-' inside
    "private_key": r"-----BEGIN[A-Z ]{0,40}PRIVATE KEY-----[^-]{0,20000}(?:-----END[A-Z ]{0,40}PRIVATE KEY-----)?",
}
# scheme://user:password@ keeps the user: the password runs to the last '@' before the path
URL_PASSWORD = re.compile(r"(?P<lead>[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s/@:]{1,256}:)[^\s/]{1,256}@")
# "Bearer <token>": a token has a digit or a symbol early on, or is a long run of letters, so
# "basic knowledge" and "bearer bonds" stay as written
BEARER = re.compile(r"(?i)(?P<lead>" + _START + r"(?:bearer|basic)\s{1,8})"
                    r"(?:(?=[A-Za-z]{0,64}[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}|[A-Za-z]{24,})")
_KEYWORD = (r"pass(?:word|wd|phrase|code)|api[ _-]?(?:key|token|secret)|secret[ _-]?access[ _-]?key"
            r"|(?:access|secret|private|signing)[ _-]?key|(?:access|auth|refresh|bearer|session)[ _-]?token"
            r"|client[ _-]?secret|authorization|secret|token|pin(?:[ _-]?code)?")
# keyword, an optional closing quote (JSON), "is"/"was" or ":"/"="/"=>", an optional scheme, then the
# value: a quoted one up to its closing quote (at most 512 characters), else up to whitespace
PHRASE = re.compile(
    r"(?i)(?P<lead>" + _START + r"(?:" + _KEYWORD + r")[\"']?"
    r"(?:\s{1,4}(?:is|was):?\s{1,4}|\s{0,4}(?:=>|[:=])\s{0,4})(?:(?:bearer|basic|token)\s{1,8})?)"
    r"(?:\"[^\"\n]{1,512}\"?|'[^'\n]{1,512}'?|[^\s\"']+)")
MAX_DEPTH = 64  # deeper values are summarised: the masker recurses
SCAN_MARGIN = 1024  # a string cut to ``limit`` is scanned this far past it, so a secret across the cut is found
_WORD_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_FORMATS = tuple(re.compile(p) for p in FORMATS.values())


def is_secret_key(key: object) -> bool:
    """``api_key``, ``accessToken``, ``X-Api-Key`` are; ``keyword``, ``max_tokens``, ``monkey`` are not."""
    return any(w.lower() in SECRET_WORDS for w in _WORD_RE.findall(str(key)))


def _keep_lead(m: re.Match[str]) -> str:
    return m.group("lead") + MASK


class Detection(Protocol):
    """One value's scan by the detectors of ``guards.mask`` (``pipeline.detectors.Found``): its placeholders."""

    def text(self, text: str) -> str: ...


@dataclass(frozen=True)
class Masker:
    """Masks secrets in a value; ``patterns`` are more to mask in strings: preset names or regexes.
    ``detect`` starts the scan of one value by ``guards.mask``'s detectors (phone numbers, ID and card
    numbers, e-mail addresses...), or returns None when none are configured; each masked value gets its
    own placeholders (``[phone#1]``), the same one for each spelling of a number within it."""

    patterns: tuple[str, ...] = ()
    detect: Callable[[], Detection | None] | None = field(default=None, compare=False)
    _compiled: tuple[re.Pattern[str], ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        compiled = []
        for p in self.patterns:
            try:
                compiled.append(re.compile(PRESETS.get(p, p)))
            except re.error as exc:
                raise InvalidInput(f"audit mask pattern {p!r} is not a valid regular expression ({exc}); "
                                   f"use a preset ({', '.join(PRESETS)}) or fix the regex") from None
        object.__setattr__(self, "_compiled", tuple(compiled))

    def __call__(self, value: Any, *, limit: int | None = None, depth: int = 0) -> Any:
        """``value`` with secrets masked; strings longer than ``limit`` are cut, saying their length."""
        return self._mask(value, limit, depth, self._detection())

    def _mask(self, value: Any, limit: int | None, depth: int, found: Detection | None) -> Any:
        if depth > MAX_DEPTH and isinstance(value, dict | list | tuple):  # a recursion limit is no reason to fail
            return f"…(nested deeper than {MAX_DEPTH} levels)"
        if isinstance(value, dict):
            return {k: MASK if is_secret_key(k) and v not in (None, "") else self._mask(v, limit, depth + 1, found)
                    for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._mask(v, limit, depth + 1, found) for v in value]
        if isinstance(value, str):
            return self._text(value, limit, found)
        return value

    def text(self, text: str, *, limit: int | None = None) -> str:
        """Free text with the formats, phrases and configured patterns masked (``limit``: cut as above)."""
        return self._text(text, limit, self._detection())

    def _detection(self) -> Detection | None:
        return None if self.detect is None else self.detect()

    def _text(self, text: str, limit: int | None, found: Detection | None) -> str:
        scanned = text if limit is None else text[:limit + SCAN_MARGIN]
        for pattern in _FORMATS:
            scanned = pattern.sub(MASK, scanned)
        scanned = URL_PASSWORD.sub(lambda m: f"{m.group('lead')}{MASK}@", scanned)
        scanned = BEARER.sub(_keep_lead, scanned)
        scanned = PHRASE.sub(_keep_lead, scanned)
        for pattern in self._compiled:
            scanned = pattern.sub(MASK, scanned)
        if found is not None:
            scanned = found.text(scanned)
        if limit is None or len(text) <= limit and len(scanned) <= limit:
            return scanned
        return f"{scanned[:limit]}…({len(text):,} chars)"


MASKER = Masker()  # the built-in rules only, for callers without a configuration

"""Hints for hosts that defer tools: which few to load at once, and words to find the rest by.

    hints = HostHints(lambda: config.hub.hints, habits, estimated_tokens, namespace.name)
    tools = hints.apply(listed, caller)      # each with _meta "anthropic/searchHint"; a few "anthropic/alwaysLoad"
    defers(client_name, patterns)            # Claude Code, Qwen Code, Copilot CLI: they load tools by search

Claude Code and Qwen Code list MCP tools to their model by name only and load a tool's schema when
their own tool search picks it (Copilot CLI does past 30 tools). Claude Code reads two keys of a tool's
``_meta``: ``anthropic/alwaysLoad: true`` loads it at once, and the string ``anthropic/searchHint``
is searched beside its name and description. The hub sets both on every tool it lists:

- **always loaded**: the tools ``hub.hints.always_load`` names (by default the hub's memory recall and
  remember), then the tools this person called on ``DAILY_DAYS`` or more of the last ``WINDOW_DAYS`` days
  (their audit, counted by ``Habits``), at most ``hub.hints.from_audit`` of them; all within
  ``hub.hints.always_load_tokens`` of schema. A downstream server's own ``alwaysLoad`` is dropped: what
  costs a host's context is the hub's to decide.
- **search hint**: the everyday words, English and Chinese, that the tool index's concept table
  (``lexicon.py``) maps to the tool's own words and that its name and description do not already say
  ("agenda 日程 会议" for a calendar tool). A server's own hint is kept, cut to ``MAX_HINT_CHARS``.

Neither key reaches a model (hosts send a model a tool's name, description and schema), so token
counts leave them out (``tokens.tool_json``).
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Protocol

import anyio
import mcp.types as types

from hermes_hub.core.toolsets.lexicon import everyday_words, is_cjk, raw_words, stem

log = logging.getLogger("hermes_hub.core.toolsets")

ALWAYS_LOAD = "anthropic/alwaysLoad"
SEARCH_HINT = "anthropic/searchHint"
HINT_KEYS = (ALWAYS_LOAD, SEARCH_HINT)
MAX_HINT_CHARS = 200  # Claude Code collapses whitespace and searches the rest; more would only dilute
MAX_HINT_WORDS = 16
WINDOW_DAYS, DAILY_DAYS = 7, 5  # "called daily": on 5 or more of the last 7 days (a weekend off allowed)
MAX_HABIT_ROWS = 10_000  # (user, tool) pairs read per refresh: bounded whatever the audit holds


class Policy(Protocol):  # ``infra.config.sections.HintsSection``
    search: bool
    always_load: list[str] | None
    from_audit: int
    always_load_tokens: int
    deferring_hosts: list[str]


def defers(client_name: str | None, patterns: Sequence[str]) -> bool:
    """Whether a host of this ``clientInfo.name`` loads tools through its own search."""
    name = (client_name or "")[:200].lower()
    return bool(name) and any(fnmatch.fnmatchcase(name, p.lower()) for p in patterns)


_EVERYDAY, _MEANS = everyday_words()


def search_hint(tool: types.Tool) -> str | None:
    """The words a person may use for ``tool`` that its name and description do not say."""
    name = raw_words(tool.name[:200])
    said = raw_words(" ".join([tool.name[:200], tool.title or "", (tool.description or "")[:2000]]))
    stems = {stem(w) for w in said}
    score: dict[str, float] = {}
    for rank, word in enumerate(dict.fromkeys([*name, *said])):  # name words first, then the description's
        weight = 3.0 if word in name else 1.0 / (1 + rank / 10)
        for everyday in _EVERYDAY.get(stem(word), ()):
            # what the word stands for first, or most of it, must be the tool's ("unlearn" is to forget a
            # memory: not a word for a tool that only recalls one)
            means = _MEANS[everyday]
            if (stem(everyday) not in stems and everyday not in said
                    and (means[0] in stems or 2 * len(stems.intersection(means)) > len(means))):
                score[everyday] = score.get(everyday, 0.0) + weight
    if not score:
        return None
    ranked = sorted(score, key=lambda w: -score[w])
    english = [w for w in ranked if not is_cjk(w)][: MAX_HINT_WORDS // 2]
    chinese = [w for w in ranked if is_cjk(w)][: MAX_HINT_WORDS - len(english)]
    hint = ""
    for word in [*english, *chinese]:
        if len(hint) + len(word) + 1 > MAX_HINT_CHARS:
            break
        hint = f"{hint} {word}" if hint else word
    return hint or None


class Audit(Protocol):
    async def audit_days(self, since: datetime, min_days: int, limit: int) -> list[tuple[str, str, int, int]]: ...


class Habits:
    """Which tools each person calls daily, from the audit: refreshed by ``follow``, read without I/O."""

    def __init__(self) -> None:
        self._daily: dict[str, tuple[str, ...]] = {}
        self.generation = 0  # changes when anyone's daily tools do

    def daily(self, user: str) -> tuple[str, ...]:
        return self._daily.get(user, ())

    async def refresh(self, store: Audit, now: datetime | None = None) -> None:
        since = (now or datetime.now(UTC)) - timedelta(days=WINDOW_DAYS)
        rows = await store.audit_days(since, DAILY_DAYS, MAX_HABIT_ROWS)  # by user, most days first
        daily: dict[str, list[str]] = {}
        for user, tool, _days, _calls in rows:
            daily.setdefault(user, []).append(tool)
        fresh = {user: tuple(tools) for user, tools in daily.items()}
        if fresh != self._daily:
            self._daily, self.generation = fresh, self.generation + 1

    async def follow(self, store: Callable[[], Audit | None], every: float,
                     changed: Callable[[], Awaitable[None]] | None = None) -> None:
        """Refresh every ``every`` seconds while the hub runs; a failed read keeps what was known."""
        while True:
            if (opened := store()) is not None:
                before = self.generation
                try:
                    await self.refresh(opened)
                except Exception as e:  # noqa: BLE001 - the hints are a nicety: the listing goes on without
                    log.warning("could not read the audit for the tools each person calls daily: %s", e)
                if changed is not None and self.generation != before:
                    await changed()
            await anyio.sleep(every)


class HostHints:
    """Puts the hints on listed tools; kept per tool object, so a listing copies each tool once."""

    def __init__(self, policy: Callable[[], Policy], habits: Habits, cost: Callable[[types.Tool], int],
                 public: Callable[[str], str]) -> None:
        self.policy, self.habits, self.cost = policy, habits, cost
        self.default_always = (public("memory_recall"), public("memory_remember"))  # the hub's own, by public name
        self._memo: dict[tuple[int, bool, bool], tuple[types.Tool, types.Tool]] = {}
        self._costs: dict[int, tuple[types.Tool, int]] = {}

    def key(self, user: str) -> tuple[str, ...]:
        """What of a listing is particular to ``user`` (their daily tools): part of a kept listing's key."""
        return self.habits.daily(user) if self.policy().from_audit else ()

    def always_loaded(self, tools: Iterable[types.Tool], user: str) -> list[str]:
        """The names of ``tools`` marked always loaded for ``user``, configured first, within the budget."""
        policy = self.policy()
        by_name = {t.name: t for t in tools}
        globs = self.default_always if policy.always_load is None else policy.always_load
        wanted = [n for n in by_name if any(fnmatch.fnmatchcase(n, g) for g in globs)]
        wanted += [n for n in self.key(user) if n in by_name and n not in wanted][: policy.from_audit]
        chosen, spent = [], 0
        for name in wanted:
            if spent >= policy.always_load_tokens:
                break
            cost = self._cost(by_name[name])
            if spent + cost <= policy.always_load_tokens:
                chosen.append(name)
                spent += cost
        return chosen

    def _cost(self, tool: types.Tool) -> int:
        hit = self._costs.get(id(tool))
        if hit is None or hit[0] is not tool:
            hit = self._costs[id(tool)] = (tool, self.cost(tool))
        return hit[1]

    def apply(self, tools: list[types.Tool], user: str) -> list[types.Tool]:
        policy = self.policy()
        if len(self._memo) > 20_000 or len(self._costs) > 20_000:
            self._memo.clear()
            self._costs.clear()
        always = set(self.always_loaded(tools, user))
        return [self._hinted(t, t.name in always, policy.search) for t in tools]

    def _hinted(self, tool: types.Tool, always: bool, search: bool) -> types.Tool:
        key = (id(tool), always, search)
        if (hit := self._memo.get(key)) is not None and hit[0] is tool:
            return hit[1]
        meta = {k: v for k, v in (tool.meta or {}).items() if k != ALWAYS_LOAD}
        own = meta.get(SEARCH_HINT)
        if isinstance(own, str):
            meta[SEARCH_HINT] = " ".join(own[:4 * MAX_HINT_CHARS].split())[:MAX_HINT_CHARS]  # cut before the work
        elif own is not None:
            meta.pop(SEARCH_HINT)
        if search and SEARCH_HINT not in meta and (hint := search_hint(tool)):
            meta[SEARCH_HINT] = hint
        if not search and own is None:
            meta.pop(SEARCH_HINT, None)
        if always:
            meta[ALWAYS_LOAD] = True
        hinted = tool if meta == (tool.meta or {}) else tool.model_copy(update={"meta": meta or None})
        self._memo[key] = (tool, hinted)
        return hinted

"""The limits step: calls a minute, calls at once and the agent's model tokens a day, per rule.

    limits = Limits(config.guards.limits, store=lambda: hub.store)
    # a call over a limit, as a tool error (the server is never called): "limit 'crm' reached: 30 calls a
    #   minute for user ann on tools crm_*; it resets at 2026-12-01 16:31:00 UTC (in 23 s) (guards.limits
    #   in hub.json)", with {"hermes-hub/limit": {"limit", "retry_after", "resets_at"}} in its _meta

Every rule of ``guards.limits`` whose ``users``, ``tools`` (public names) and ``servers`` globs cover a
call applies to it; ``per_user`` (the default) gives each user a count of their own, else one count is
shared by everyone the rule covers. The counts live in the store (``guard_counters``), so replicas on
one PostgreSQL database share them: each unit is taken by one upsert that adds only while the sum stays
within the limit (a limit of 128 or more, a block of 1/64 of it at a time: ``blocks``). Windows are fixed, from the clock (``clock``, a test's to control): a minute for
``calls_per_minute``, a UTC day for ``tokens_per_day``. ``concurrent`` holds a unit while the call runs
and gives it back when it ends (shielded); a replica that dies mid-call leaves its unit until the
counter has been idle for ``LEASE`` seconds.

``tokens_per_day`` covers the agent: a ``hermes_agent_run`` call is refused once the day's budget is
spent, and the loop reports each model reply's tokens to ``spend`` (``Agent(budget=...)``), which
stops a run that goes over. A refusal notes ``call.notes["limit"]`` for telemetry and the audit.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from fnmatch import fnmatchcase
from typing import Any, Protocol

import anyio
import mcp.types as types

from hermes_hub.infra.config.guard_rules import LimitRule
from hermes_hub.core.pipeline import Call, Result, Send, blocks

MINUTE, DAY = 60.0, 86400.0
LEASE = 3600.0  # seconds a concurrency count outlives its last taker (a replica that died mid-call)
AGENT_TOOL = ("hermes", "agent_run")  # (server, original name) of the call the token budget covers
UNBOUNDED = 2**62
# Set by ``upstream/limit_status.py`` around a 2026-07-28 HTTP request: the refusals of rules with
# ``http_429`` of the host's own call (not an agent run's calls) are noted here, on the request's context,
# never read from the answer a server could shape.
HTTP_REFUSALS: ContextVar[list[Refusal] | None] = ContextVar("hermes_hub_http_refusals", default=None)
LIMIT_META = "hermes-hub/limit"  # a refusal's _meta: the limit, retry_after seconds, resets_at (epoch; null: a call's end)


class Counters(blocks.Counters, Protocol):
    """What the step needs of the store (``hermes_hub.infra.storage.crud.counters``)."""

    async def read_counter(self, name: str, win: float, *, now: float) -> int: ...


@dataclass(frozen=True)
class Refusal:
    limit: str  # the rule's name
    what: str  # "30 calls a minute per user on tools crm_*"
    resets_at: float | None  # epoch seconds; None: when a running call ends
    now: float
    http_429: bool = False  # the rule asks HTTP hosts to be answered 429 (``upstream/limit_status.py``)

    @property
    def retry_after(self) -> int:
        """Seconds until the limit resets (what an HTTP 429's Retry-After says)."""
        return 1 if self.resets_at is None else max(1, math.ceil(self.resets_at - self.now))

    def said(self) -> dict[str, Any]:
        """The refusal's data: a tool error's ``_meta``, an HTTP 429's JSON-RPC error data."""
        return {"limit": self.limit, "retry_after": self.retry_after, "resets_at": self.resets_at}

    def message(self) -> str:
        if self.resets_at is None:
            when = "a unit frees as soon as one of the running calls ends; try again then"
        else:
            at = datetime.fromtimestamp(self.resets_at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
            when = f"it resets at {at} (in {self.retry_after} s)"
        return f"limit '{self.limit}' reached: {self.what}; {when} (guards.limits in hub.json)"


class Limits:
    def __init__(self, rules: Sequence[LimitRule], store: Callable[[], Counters | None],
                 clock: Callable[[], float] = time.time, units: blocks.Blocks | None = None) -> None:
        self.rules = [(r.name or f"limits[{i}]", r) for i, r in enumerate(rules)]
        self.store, self.clock = store, clock
        self.units = units or blocks.Blocks(store)  # large limits' units, a block at a time (``blocks``)
        self._covering: dict[tuple[str, str, str], list[tuple[str, LimitRule]]] = {}

    def covering(self, user_id: str, tool: str, server: str) -> list[tuple[str, LimitRule]]:
        key = (user_id, tool, server)
        if (known := self._covering.get(key)) is None:
            if len(self._covering) > 4096:  # bounded: users x tools, the globs matched once each
                self._covering.clear()
            known = self._covering[key] = [
                (name, r) for name, r in self.rules
                if any(fnmatchcase(user_id, g) for g in r.users) and any(fnmatchcase(tool, g) for g in r.tools)
                and any(fnmatchcase(server, g) for g in r.servers)]
        return known

    async def __call__(self, call: Call, proceed: Send) -> Result:
        store = self.store()
        rules = self.covering(call.user_id, call.tool, call.server)
        if store is None or not rules:
            return await proceed()
        taken: list[tuple[str, float, int]] = []
        try:
            for name, rule in rules:
                refused = await self._take(store, name, rule, call, taken)
                if refused is not None:
                    call.notes["limit"] = {"name": refused.limit, "retry_after": refused.retry_after}
                    if refused.http_429 and call.ctx.run_id is None and (asked := HTTP_REFUSALS.get()) is not None:
                        asked.append(refused)  # a host's own call, over HTTP: its answer becomes a 429
                    return _error(refused)
            taken = [t for t in taken if t[1] == 0]  # a minute's count stays taken; a running one goes back
            return await proceed()
        finally:
            back = [(c, w) for c, w, limit in taken if not self.units.keep(c, w, limit)]
            if back:  # the store's units, given back however the call ended
                with anyio.CancelScope(shield=True), anyio.move_on_after(10):
                    for counter, win in back:
                        await store.give_counter(counter, win, 1)

    async def _take(self, store: Counters, name: str, rule: LimitRule, call: Call,
                    taken: list[tuple[str, float, int]]) -> Refusal | None:
        who = call.user_id if rule.per_user else "*"
        now = self.clock()
        if rule.tokens_per_day is not None and (call.server, call.original) == AGENT_TOOL:
            day = math.floor(now / DAY) * DAY
            if await store.read_counter(f"{name}|tokens|{who}", day, now=now) >= rule.tokens_per_day:
                return Refusal(name, f"{rule.tokens_per_day:,} model tokens a day {_scope(rule, who)}", day + DAY, now,
                               rule.http_429)
        if rule.calls_per_minute is not None:
            win = math.floor(now / MINUTE) * MINUTE
            counter = f"{name}|minute|{who}"
            if not await self.units.take(store, counter, win, rule.calls_per_minute, now=now,
                                         expires_at=win + MINUTE):
                return Refusal(name, f"{_calls(rule.calls_per_minute)} a minute {_scope(rule, who)}", win + MINUTE, now,
                               rule.http_429)
            taken.append((counter, win, rule.calls_per_minute))
        if rule.concurrent is not None:
            counter = f"{name}|busy|{who}"
            if not await self.units.take(store, counter, 0, rule.concurrent, now=now, expires_at=now + LEASE):
                return Refusal(name, f"{_calls(rule.concurrent)} at once {_scope(rule, who)}", None, now, rule.http_429)
            taken.append((counter, 0, rule.concurrent))
        return None

    async def spend(self, user_id: str, tokens: int) -> str | None:
        """Count an agent run's model tokens against every daily budget covering ``user_id``; the refusal
        when one is now spent (the run stops), else None."""
        store = self.store()
        if store is None or tokens <= 0:
            return None
        now = self.clock()
        day = math.floor(now / DAY) * DAY
        over = None
        for name, rule in self._budgets(user_id):
            who = user_id if rule.per_user else "*"
            used = await store.take_counter(f"{name}|tokens|{who}", day, tokens, UNBOUNDED, now=now,
                                            expires_at=day + DAY)
            if over is None and used is not None and used >= (rule.tokens_per_day or UNBOUNDED):
                over = Refusal(name, f"{rule.tokens_per_day:,} model tokens a day {_scope(rule, who)}",
                               day + DAY, now).message()
        return over

    def _budgets(self, user_id: str) -> list[tuple[str, LimitRule]]:
        return [(n, r) for n, r in self.rules if r.tokens_per_day is not None
                and any(fnmatchcase(user_id, g) for g in r.users)
                and any(fnmatchcase(AGENT_TOOL[0], g) for g in r.servers)]


def _calls(n: int) -> str:
    return f"{n} call" if n == 1 else f"{n} calls"


def _scope(rule: LimitRule, who: str) -> str:
    whose = f"for user {who}" if who != "*" else "for everyone it covers"
    tools = "" if rule.tools == ["*"] else f" on tools {', '.join(rule.tools)}"
    servers = "" if rule.servers == ["*"] else f" of servers {', '.join(rule.servers)}"
    return f"{whose}{tools}{servers}"


def _error(refused: Refusal) -> types.CallToolResult:
    """The tool error a model reads, with what an HTTP host's retry logic wants in ``_meta`` (429's Retry-After)."""
    meta = {LIMIT_META: refused.said()}
    return types.CallToolResult(content=[types.TextContent(type="text", text=refused.message())], is_error=True,
                                _meta=meta)

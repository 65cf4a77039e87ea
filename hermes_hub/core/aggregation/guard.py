"""The pins a hub enforces: a pinned tool whose definition changed is withheld until an admin approves it.

    guard = PinGuard(mode="auto")                        # hub.pin
    async with guard.watching(store, on_change):         # loads the pins, then keeps them fresh
        drift = guard.check("git", tool, "git_delete")   # None: serve it; a Drift: withhold it

``check`` runs inside every catalog rebuild (server ready, restarted, relisted after ``list_changed``,
a reload), so it only reads memory; what it learns (tools pinned on first sight with ``hub.pin:
"auto"``, a changed definition seen, a legacy pin that still holds upgraded to one over every field) is
written to the store by the watching loop. The loop also
re-reads the pins every ``poll`` seconds: ``hermes-hub tools approve`` writes the store from another
process, and the hub rebuilds its lists when a pin changed, without a restart. The store is shared by
every replica, so a pin made by one holds for all.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
import mcp.types as types

from hermes_hub.core.aggregation.pins import Drift, digests, is_legacy
from hermes_hub.infra.storage import Store
from hermes_hub.infra.storage.records import PinRecord, utcnow

log = logging.getLogger("hermes_hub.pins")
POLL_SECONDS = 2.0  # how soon a running hub sees an approval made by the CLI
FLUSH_SECONDS = 5.0  # the last write when the hub stops
MAX_REMEMBERED = 10_000  # digests cached and drifts logged; past it they start over (a server inventing names)
Key = tuple[str, str]  # (server, the server's tool name)


class PinGuard:
    def __init__(self, mode: Literal["manual", "auto"] = "manual", poll: float = POLL_SECONDS) -> None:
        self.mode = mode
        self.poll = poll
        self.loaded = False  # pins are known once the store is read; a catalog without a store pins nothing
        self._pins: dict[Key, PinRecord] = {}
        self._defs: dict[Key, tuple[types.Tool, dict[str, Any], str, str]] = {}  # tool -> (kept, digest, legacy)
        self._new: dict[Key, PinRecord] = {}  # pinned on first sight, to write
        self._upgraded: dict[Key, tuple[str, PinRecord]] = {}  # legacy pins that still hold: (old digest, new pin)
        self._seen: dict[Key, tuple[str | None, dict[str, Any] | None]] = {}  # changed definitions seen, to write
        self._logged: set[tuple[Key, str]] = set()
        self._wake = anyio.Event()

    # -- in a rebuild: memory only ------------------------------------------------------------

    def check(self, server: str, tool: types.Tool, public: str) -> Drift | None:
        """The drift of ``server``'s ``tool`` (served as ``public``) from its pin; None when it may be served."""
        if not self.loaded:
            return None
        key = (server, tool.name)
        current, now, old = self._definition(key, tool)
        pin = self._pins.get(key)
        if pin is None:
            if self.mode == "auto":
                self._pins[key] = self._new[key] = PinRecord(server, tool.name, now, current, utcnow(), "auto")
                self._wake.set()
            return None
        if is_legacy(pin.digest) and pin.digest == old:  # pinned before pins covered every field: pin it all now
            self._pins[key] = upgraded = dataclasses.replace(pin, digest=now, definition=current, seen_digest=None,
                                                             seen_definition=None, seen_at=None)
            self._upgraded[key] = (pin.digest, upgraded)
            self._wake.set()
            return None
        if pin.digest == now:
            if pin.seen_digest is not None:  # it changed, then changed back: nothing left to approve
                self._remember_seen(key, pin, None, None)
            return None
        if pin.seen_digest != now:
            self._remember_seen(key, pin, now, current)
        drift = Drift(server, tool.name, public, pin.definition, current, pin.pinned_at, pin.pinned_by, now,
                      legacy=is_legacy(pin.digest))
        if (key, now) not in self._logged:  # once per changed definition, not once per rebuild
            if len(self._logged) >= MAX_REMEMBERED:
                self._logged.clear()
            self._logged.add((key, now))
            log.warning("%s", drift.message())
        return drift

    def _definition(self, key: Key, tool: types.Tool) -> tuple[dict[str, Any], str, str]:
        """(what is kept of ``tool``, its digest, the digest a legacy pin of it would have)."""
        cached = self._defs.get(key)
        if cached is None or cached[0] is not tool:  # a relist makes new objects; digest each once
            if len(self._defs) >= MAX_REMEMBERED:
                self._defs.clear()
            cached = self._defs[key] = (tool, *digests(tool))  # the digest covers it all
        return cached[1], cached[2], cached[3]

    def _remember_seen(self, key: Key, pin: PinRecord, now: str | None, current: dict[str, Any] | None) -> None:
        self._pins[key] = dataclasses.replace(pin, seen_digest=now, seen_definition=current,
                                              seen_at=None if now is None else utcnow())
        self._seen[key] = (now, current)
        self._wake.set()

    # -- with the store --------------------------------------------------------------------------

    async def load(self, store: Store) -> bool:
        """Read every pin; True when one was added, changed or removed since the last read."""
        rows = {(r.server, r.tool): r for r in await store.list_pins()}
        rows.update({k: v for k, v in self._new.items() if k not in rows})  # not written yet
        rows.update({k: new for k, (old, new) in self._upgraded.items() if k in rows and rows[k].digest == old})
        changed = {k: r.digest for k, r in rows.items()} != {k: r.digest for k, r in self._pins.items()}
        self._pins, self.loaded = rows, True
        return changed

    async def flush(self, store: Store) -> None:
        """Write what ``check`` learnt since the last flush."""
        new, self._new = self._new, {}
        try:
            if await store.add_pins(list(new.values())):
                log.info("pinned %d tool definition(s) on first sight (hub.pin: auto)", len(new))
        except BaseException:
            self._new = {**new, **self._new}
            raise
        upgraded, self._upgraded = self._upgraded, {}
        try:
            if n := await store.upgrade_pins(list(upgraded.values())):
                names = ", ".join(sorted(f"{s}/{t}" for s, t in upgraded)[:20]) + (" …" if len(upgraded) > 20 else "")
                log.info("pinned %d tool definition(s) again over every field (title, icons, _meta, ...), as their "
                         "earlier pins still held: %s", n, names)
        except BaseException:
            self._upgraded = {**upgraded, **self._upgraded}
            raise
        seen, self._seen = self._seen, {}
        for i, ((server, tool), (now, current)) in enumerate(seen.items()):
            try:
                await store.note_seen(server, tool, now, current, at=utcnow())
            except BaseException:
                self._seen = {**dict(list(seen.items())[i:]), **self._seen}
                raise

    @asynccontextmanager
    async def watching(self, store: Store, on_change: Callable[[], None]) -> AsyncIterator[PinGuard]:
        """Load the pins, then keep them in step with the store until the block ends; ``on_change`` runs when
        a pin changed (the caller rebuilds its lists)."""
        await self.load(store)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._loop, store, on_change)
            try:
                yield self
            finally:
                tg.cancel_scope.cancel()
        with anyio.CancelScope(shield=True), anyio.move_on_after(FLUSH_SECONDS):  # a short-lived hub (the CLI)
            try:                                                                  # records what it saw too
                await self.flush(store)
            except Exception as e:  # noqa: BLE001 - stopping: say so, do not fail the stop
                log.warning("pinned tool definitions: could not write what was seen (%s)", e)

    async def _loop(self, store: Store, on_change: Callable[[], None]) -> None:
        while True:
            with anyio.move_on_after(self.poll):
                await self._wake.wait()
            self._wake = anyio.Event()
            try:
                await self.flush(store)
                if await self.load(store):
                    on_change()
            except Exception as e:  # noqa: BLE001 - a store that fails now is tried again next round
                log.warning("pinned tool definitions: the store failed (%s); trying again in %gs", e, self.poll)

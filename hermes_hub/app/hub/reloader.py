"""Reload hub.json on SIGHUP and when the file changes; a config that fails validation is refused
and the running one stays."""

from __future__ import annotations

import hashlib
import logging
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import anyio

from hermes_hub.infra.config import load_config
from hermes_hub.infra.errors import ConfigError

if TYPE_CHECKING:
    from hermes_hub.infra.config import HubConfig
    from hermes_hub.downstream.pool import Changes


class Hub(Protocol):
    """What reloading needs of the hub (the hub imports this module, so it is named here, not imported)."""

    async def reload(self, config: HubConfig) -> Changes: ...

log = logging.getLogger("hermes_hub.reload")
POLL_SECONDS = 1.0


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


async def reload_from(hub: Hub, path: Path, reason: str) -> bool:
    """Load ``path`` and apply it to ``hub``; False (and a log line saying why) if it is invalid."""
    try:
        config = load_config(path)
    except ConfigError as e:
        log.error("not reloading (%s): %s\nThe running configuration stays in force.", reason, e)
        return False
    changes = await hub.reload(config)
    log.info("reloaded %s (%s): added %s, removed %s, restarted %s", path, reason,
             changes.added or "none", changes.removed or "none", changes.restarted or "none")
    return True


async def watch_config(hub: Hub, path: Path, poll: float = POLL_SECONDS) -> None:
    """Run until cancelled: reload on SIGHUP, and when the file's content changes."""
    seen = _digest(path)

    async def on_sighup() -> None:
        try:
            with anyio.open_signal_receiver(signal.SIGHUP) as signals:
                async for _ in signals:
                    await reload_from(hub, path, "SIGHUP")
        except (RuntimeError, ValueError, NotImplementedError):  # not the main thread, or no signals here
            log.info("SIGHUP reload unavailable here; watching %s for changes only", path)

    async with anyio.create_task_group() as tg:
        tg.start_soon(on_sighup)
        while True:
            await anyio.sleep(poll)
            now = _digest(path)
            if now is not None and now != seen:
                seen = now
                await reload_from(hub, path, "file changed")

"""Is a READY server still answering? A bounded probe every ``health_interval`` seconds.

Handshake-era connections answer ``ping``; 2026-07-28 removed ping, so those get a ``server/discover``,
which every modern server answers. ``health_failures`` failed probes in a row make the verdict.
"""

from __future__ import annotations

import logging

import anyio
from mcp import Client, MCPError
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from hermes_hub.infra.config import ServerConfig

log = logging.getLogger("hermes_hub.downstream")


async def probe(client: Client) -> None:
    """One health check; raises MCPError (or TimeoutError, from the caller's bound) when it fails."""
    version = client.protocol_version
    if version in MODERN_PROTOCOL_VERSIONS:
        await client.session.send_discover(version)
    else:
        await client.session.send_ping()


class HealthCheck:
    """Counts the consecutive failed probes of one server (``failures``, shown in status)."""

    def __init__(self, name: str, cfg: ServerConfig) -> None:
        self.name = name
        self.interval, self.timeout, self.allowed = cfg.health_interval, cfg.health_timeout, cfg.health_failures
        self.failures = 0

    async def watch(self, client: Client) -> str:
        """Probe until ``allowed`` probes in a row have failed; return why, for status and the log."""
        self.failures = 0
        method = "server/discover" if client.protocol_version in MODERN_PROTOCOL_VERSIONS else "ping"
        while True:
            await anyio.sleep(self.interval)  # the check's period, not a wait for some state
            try:
                with anyio.fail_after(self.timeout):
                    await probe(client)
            except TimeoutError:
                why = f"no answer to {method} within {self.timeout:g}s"
            except MCPError as e:
                why = f"{method} failed: {e.message} (code {e.code})"
            except Exception as e:  # noqa: BLE001 - a broken session is a failed check, not a crash
                why = f"{method} failed: {type(e).__name__}: {e}"
            else:
                self.failures = 0
                continue
            self.failures += 1
            log.warning("[%s] health check %d/%d failed: %s", self.name, self.failures, self.allowed, why)
            if self.failures >= self.allowed:
                return (f"stopped answering: {self.failures} health checks in a row failed (last: {why}); "
                        f"raise mcpServers.{self.name}.health_timeout if it is just slow")

"""Whether each enabled stdio server of a hub.json really starts: ``hermes-hub check`` runs every one
as the hub would and waits for its MCP handshake, all at once, each bounded by its ``startup_timeout``.

Resolving the command is not enough: a ``python`` that exists but lacks the server's packages, or a
script that exits at once, passes every static check and then crash-loops under ``serve``.
"""

from __future__ import annotations

from collections.abc import Iterable

import anyio

from hermes_hub.infra.config import HubConfig


async def failures(path: str, cfg: HubConfig, names: Iterable[str],
                   warnings: list[str] | None = None) -> dict[str, str]:
    """``{server: why it did not start}`` for the stdio servers ``names`` of ``cfg`` (read from ``path``);
    an empty dict when each shook hands. Servers start concurrently, so this takes the slowest one's time.
    ``warnings`` gets a line for each of a started server's ``overrides`` that names no tool of it."""
    from hermes_hub.app.cli.target import Target, connect

    found: dict[str, str] = {}

    async def start(name: str) -> None:
        target = Target(config=path, direct=name)
        try:
            async with connect(target) as (client, _):  # connected means the handshake is done
                if warnings is not None and (overrides := cfg.mcp_servers[name].overrides):
                    from hermes_hub.core.aggregation.overrides import Overrides

                    listed = (await client.list_tools()).tools
                    warnings.extend(Overrides.of(overrides).unknown(listed, f"mcpServers.{name}"))
        except Exception as e:  # any failure to start is this server's problem, reported with its name
            found[name] = str(e).removeprefix(f"{target.describe()} ").rstrip(".")

    async with anyio.create_task_group() as tg:
        for name in names:
            if cfg.mcp_servers[name].transport == "stdio":
                tg.start_soon(start, name)
    return {name: found[name] for name in names if name in found}


def problems(path: str, cfg: HubConfig, static: list[str], warnings: list[str] | None = None) -> list[str]:
    """``check``'s lines for the enabled servers that ``static`` problems left standing but that do not start."""
    failed = anyio.run(failures, path, cfg, startable(cfg, static), warnings)
    return [problem(name, why, path) for name, why in failed.items()]


def startable(cfg: HubConfig, problems: Iterable[str]) -> list[str]:
    """The enabled servers that no static problem (``checks.unstartable``) already rules out."""
    ruled_out = {".".join(p.split(":", 1)[0].split(".")[:2]) for p in problems}  # "mcpServers.NAME.KEY...: ..."
    return [n for n in cfg.enabled() if f"mcpServers.{n}" not in ruled_out]


def problem(name: str, why: str, path: str) -> str:
    """One line of ``check``'s report, with the keys to look at."""
    return f"mcpServers.{name}: {why}; check mcpServers.{name}.command and args in {path}"

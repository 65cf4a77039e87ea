"""Why a downstream server is down, in words a person can act on: what happened, and what to check.

    explain("github", cfg, link, exc)
    # "exited during startup (process exited (exit 1); last stderr line: ...); check mcpServers.github.command ..."
"""

from __future__ import annotations

from mcp import MCPError

from hermes_hub.infra.config import ServerConfig
from hermes_hub.downstream.transports import CommandNotFound, Link

# Retrying the same config cannot help: the server stays FAILED until the config changes.
CANNOT_HEAL = (CommandNotFound, PermissionError, FileNotFoundError)


def unwrap(exc: BaseException) -> BaseException:
    """The one exception inside nested single-member groups (anyio task groups wrap them)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def tail(link: Link) -> str:
    return f"; last stderr line: {link.stderr_tail[-1]}" if link.stderr_tail else ""


def gone(cfg: ServerConfig, link: Link) -> str:
    """The peer went away: the child's exit code or signal, or the URL that closed."""
    if link.lost:
        return link.lost
    if cfg.transport == "stdio":
        code = link.exit_code
        how = f"exit {code}" if code is None or code >= 0 else f"killed by signal {-code}"
        return f"process exited ({how}){tail(link)}"
    return f"connection to {cfg.url} closed"


def explain(name: str, cfg: ServerConfig, link: Link, exc: BaseException) -> str:
    """Why an attempt to connect failed with ``exc``, ending with what to check in the config file."""
    exc = unwrap(exc)
    where = f"mcpServers.{name}"
    if isinstance(exc, CommandNotFound):
        return f"{exc}; check {where}.{exc.key} in {cfg.config_file}"
    if isinstance(exc, PermissionError | FileNotFoundError):
        return f"cannot start {cfg.command!r}: {exc.strerror}; check {where}.command in {cfg.config_file}"
    if link.exited_on_its_own:
        return f"exited during startup ({gone(cfg, link)}); check {where}.command and .args in {cfg.config_file}"
    if isinstance(exc, MCPError):
        other = {"legacy": "auto", "auto": "2026-07-28"}.get(cfg.mode, "auto")  # the mode not tried yet
        return f"handshake failed: {exc.message} (code {exc.code}); is {where} an MCP server? try mode \"{other}\""
    if cfg.transport != "stdio":
        return f"cannot reach {cfg.url}: {type(exc).__name__}: {exc}; check {where}.url and that it is up"
    return f"{type(exc).__name__}: {exc}{tail(link)}"

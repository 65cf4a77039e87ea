"""Codex's ``~/.codex/config.toml``: the hub's ``[mcp_servers.NAME]`` table in, the servers out.

    doc = read(path)                                   # None when the file is missing or empty
    text = with_server(doc, "hermes", entry)           # the file's text with the entry, comments and order kept
    servers = in_hub_terms(servers_of(doc, path))      # hub.json's mcpServers entries

Edited with ``tomlkit``, which keeps comments, blank lines and key order, so a diff shows only the
hub's table. Codex's own keys become hub.json's on import: ``bearer_token_env_var`` an
``Authorization`` header, ``http_headers``/``env_http_headers`` headers, ``enabled = false``
``disabled``, ``startup_timeout_sec``/``tool_timeout_sec`` the hub's timeouts, ``enabled_tools`` and
``disabled_tools`` its allow and deny lists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import ParseError
from tomlkit.toml_document import TOMLDocument

from hermes_hub.app.cli.hosts import HostFileError

KEY = "mcp_servers"


def read(path: Path) -> tuple[TOMLDocument | None, str | None]:
    """The parsed file (None when it does not exist or is empty) and its text; ``HostFileError`` if it is not TOML."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as e:
        raise HostFileError(f"cannot read Codex's config {path}: {getattr(e, 'strerror', None) or e}; "
                            f"nothing was written")
    if not text.strip():
        return None, text
    try:
        return tomlkit.parse(text), text
    except ParseError as e:
        raise HostFileError(f"Codex's config {path} is not valid TOML ({e}); fix it or move the file away, then "
                            f"run this again. Nothing was written.")


def servers_of(doc: TOMLDocument | None, path: Path) -> dict[str, Any]:
    """``[mcp_servers.*]`` as plain values."""
    servers = (doc or {}).get(KEY, {})
    if not isinstance(servers, dict):
        raise HostFileError(f"'{KEY}' in {path} must be a table of servers by name ([{KEY}.NAME]); fix it, then "
                            f"run this again. Nothing was written.")
    return {name: dict(entry.unwrap()) if hasattr(entry, "unwrap") else entry for name, entry in servers.items()}


def with_server(doc: TOMLDocument | None, name: str, entry: dict[str, Any]) -> str:
    """The file's text with ``[mcp_servers.NAME]`` set to ``entry`` (``env`` as an inline table)."""
    doc = doc if doc is not None else tomlkit.document()
    if KEY not in doc:
        doc[KEY] = tomlkit.table(is_super_table=True)
    table = tomlkit.table()
    for key, value in entry.items():
        if isinstance(value, dict):
            inline = tomlkit.inline_table()
            inline.update(value)
            table[key] = inline
        else:
            table[key] = value
    doc[KEY][name] = table
    return tomlkit.dumps(doc)


_RENAMED = {"startup_timeout_sec": "startup_timeout", "tool_timeout_sec": "timeout"}


def in_hub_terms(entry: Any) -> Any:
    """One Codex server as hub.json writes it (keys Codex alone has are translated; the rest stay as they are)."""
    if not isinstance(entry, dict):
        return entry
    out: dict[str, Any] = {}
    headers: dict[str, str] = {}
    tools: dict[str, Any] = {}
    for key, value in entry.items():
        if key == "bearer_token_env_var":
            headers["Authorization"] = f"Bearer ${{{value}}}"
        elif key == "http_headers" and isinstance(value, dict):
            headers.update(value)
        elif key == "env_http_headers" and isinstance(value, dict):
            headers.update({h: f"${{{var}}}" for h, var in value.items()})
        elif key == "enabled":
            if value is False:
                out["disabled"] = True
        elif key in ("enabled_tools", "disabled_tools"):
            tools["allow" if key == "enabled_tools" else "deny"] = value
        else:
            out[_RENAMED.get(key, key)] = value
    if headers:
        out["headers"] = headers
    if tools:
        out["tools"] = tools
    return out

"""hermes-hub: an MCP hub for personal AI agents. One catalog over many MCP servers.

    from hermes_hub import Hub, load_config
    async with Hub(load_config("hub.json")) as hub: ...
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_hub.infra.config import HubConfig, load_config
    from hermes_hub.infra.errors import ConfigError, HubError
    from hermes_hub.app.hub import VERSION as __version__
    from hermes_hub.app.hub import Hub

__all__ = ["ConfigError", "Hub", "HubConfig", "HubError", "__version__", "load_config"]

# Imported on first use: `hermes-hub --help` (and every `python -m hermes_hub`) imports this package,
# and the hub itself pulls in the MCP SDK, Starlette and SQLite (~650 modules, about a second).
_LAZY = {
    "ConfigError": ("hermes_hub.infra.errors", "ConfigError"),
    "Hub": ("hermes_hub.app.hub", "Hub"),
    "HubConfig": ("hermes_hub.infra.config", "HubConfig"),
    "HubError": ("hermes_hub.infra.errors", "HubError"),
    "__version__": ("hermes_hub.app.hub", "VERSION"),
    "load_config": ("hermes_hub.infra.config", "load_config"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'hermes_hub' has no attribute {name!r}")
    module, attr = _LAZY[name]
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])

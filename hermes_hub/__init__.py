"""hermes-hub: an MCP hub for personal AI agents. One catalog over many MCP servers.

    from hermes_hub import Hub, load_config
    async with Hub(load_config("hub.json")) as hub: ...
"""

from hermes_hub.config import HubConfig, load_config
from hermes_hub.errors import ConfigError, HubError
from hermes_hub.hub import VERSION as __version__
from hermes_hub.hub import Hub

__all__ = ["ConfigError", "Hub", "HubConfig", "HubError", "__version__", "load_config"]

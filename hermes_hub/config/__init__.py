"""hub.json: the ``mcpServers`` map Claude Desktop users already have, plus hermes keys.

    config = load_config("hub.json")        # raises ConfigError naming every bad key path

``sections`` holds the models of each part; ``document`` reads a file into them.
"""

from hermes_hub.config.document import FOREIGN_SERVER_KEYS, FOREIGN_TOP_KEYS, load_config, parse_config
from hermes_hub.config.sections import (
    MODEL_KEYS,
    REQUEST_KEYS,
    PREFIX_RE,
    AgentProfile,
    AgentSection,
    AuthSection,
    HubConfig,
    HubSection,
    MemorySection,
    ServerConfig,
    StorageSection,
    TokenEntry,
    ToolFilter,
    ToolsetConfig,
)

__all__ = ["FOREIGN_SERVER_KEYS", "FOREIGN_TOP_KEYS", "MODEL_KEYS", "PREFIX_RE", "REQUEST_KEYS", "AgentProfile", "AgentSection",
           "AuthSection", "HubConfig", "HubSection", "MemorySection", "ServerConfig", "StorageSection", "TokenEntry",
           "ToolFilter", "ToolsetConfig", "load_config", "parse_config"]

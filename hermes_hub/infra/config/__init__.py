"""hub.json: the ``mcpServers`` map Claude Desktop users already have, plus hermes keys.

    config = load_config("hub.json")        # raises ConfigError naming every bad key path

``sections`` holds the models of each part; ``document`` reads a file into them.
"""

from hermes_hub.infra.config.document import FOREIGN_SERVER_KEYS, FOREIGN_TOP_KEYS, load_config, parse_config
from hermes_hub.infra.config.sections import (
    MODEL_KEYS,
    REQUEST_KEYS,
    PREFIX_RE,
    AgentProfile,
    AnnotationsOverride,
    AgentSection,
    AuthSection,
    HubConfig,
    HubSection,
    MemorySection,
    ServerAuth,
    ServerConfig,
    StorageSection,
    TokenEntry,
    ToolFilter,
    ToolOverride,
    ToolsetConfig,
)

__all__ = ["FOREIGN_SERVER_KEYS", "FOREIGN_TOP_KEYS", "MODEL_KEYS", "PREFIX_RE", "REQUEST_KEYS", "AgentProfile",
           "AgentSection", "AnnotationsOverride", "AuthSection", "HubConfig", "HubSection", "MemorySection", "ServerAuth",
           "ServerConfig", "StorageSection", "TokenEntry", "ToolFilter", "ToolOverride", "ToolsetConfig", "load_config",
           "parse_config"]

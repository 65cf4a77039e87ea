"""Programs that talk to a hub the way any MCP host does: ``chat.py``, a terminal chat over ``hermes_agent_run``."""

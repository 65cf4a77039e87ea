"""Programs that talk to a hub the way any MCP host does, runnable from a checkout: ``chat.py`` (``hermes-hub
chat``; its code is ``hermes_hub/chat/``) and ``example/`` (a demo hub.json with a scripted model)."""

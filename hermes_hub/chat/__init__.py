"""``hermes-hub chat``'s program: an ordinary MCP host over the hub (``conversation.py``), its connection
(a spawned ``hermes-hub serve --stdio`` or a URL) and its terminal. It uses the MCP SDK only, never the hub's code."""

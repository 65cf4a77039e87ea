"""The bundled demo MCP servers: ``calendar``, ``reminders``, ``notes`` (``python -m hermes_hub.demo.NAME
[--http PORT]``; from a checkout also ``python -m servers.NAME``). They use the MCP SDK only, never the hub."""

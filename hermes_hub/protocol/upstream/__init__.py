"""Upstream: what hosts talk to, short of a running hub: the transport-free MCP server, each endpoint,
bearer auth, exposure (Host/Origin), request gates and session ownership. ``hermes_hub.app.serving``
mounts them over stdio or streamable HTTP."""

"""The hub served to hosts: over HTTP (``app.py``: /mcp, /mcp/<toolset>, /healthz, /readyz and the status
page) and over stdio (``stdio.py``). These mount a running ``Hub``; the pieces they are built from
(the transport-free server, auth, gates, exposure) live in ``hermes_hub.protocol.upstream``, below the hub."""

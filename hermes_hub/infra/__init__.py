"""The floor every other stratum stands on: the vocabulary (errors, masking, the call, config), the
seam to the MCP SDK, events and telemetry, the store's core, and model providers. Nothing here
imports any other stratum."""

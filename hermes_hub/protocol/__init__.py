"""What hosts speak to: the MCP server side (``upstream``) and the hub as an OAuth authorization
server (``authorization``). It uses ``core`` and everything below."""

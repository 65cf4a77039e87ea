"""Tool-count control: toolsets per endpoint, lazy meta-tools with search, token reports."""

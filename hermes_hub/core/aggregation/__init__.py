"""Aggregation: reversible namespaces, allow/deny filters and the merged catalog."""

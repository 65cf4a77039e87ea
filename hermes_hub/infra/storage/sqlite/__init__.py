"""The SQLite backend, one module per concept: ``store`` (connections, the one writer), ``sessions``,
``tokens``, ``logins``, ``audit``, ``runs``, ``memories``, ``indexing``, ``vectors``, ``jobs``,
``summaries`` (plain SQL functions of a connection) and ``migrations`` (the schema)."""

from hermes_hub.infra.storage.sqlite.store import SQLiteStore, open_sqlite

__all__ = ["SQLiteStore", "open_sqlite"]

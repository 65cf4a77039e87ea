"""The PostgreSQL backend, one module per concept: ``store`` (the pool, retries), ``sessions``,
``tokens``, ``logins``, ``audit``, ``runs``, ``memories``, ``indexing`` and ``claims`` (batches shared
by replicas), ``vectors``, ``jobs``, ``summaries`` (async SQL functions of a connection), ``schema``,
``transactions`` (write keys) and ``url``."""

from hermes_hub.infra.storage.postgres.store import PostgresStore, open_postgres

__all__ = ["PostgresStore", "open_postgres"]

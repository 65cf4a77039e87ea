"""``storage.url`` for PostgreSQL: the DSN asyncpg gets, the hub's own options, and the URL as shown
(password hidden).

URL forms (``${VAR}`` expands in hub.json like everywhere else): ``postgresql://user:pass@host:5432/db``,
``postgresql://user@/db?host=/run/postgresql`` (a socket directory, as libpq takes it), plus the hub's
own options ``pool_size`` and ``statement_timeout``; other query parameters go to the driver.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from hermes_hub.infra.errors import StorageError

OPTIONS = {"pool_size", "statement_timeout"}


def redact(url: str) -> str:
    parts = urlsplit(url)
    return url.replace(f":{parts.password}@", ":***@") if parts.password else url


def parse_url(url: str) -> tuple[str, dict[str, float]]:
    """The DSN asyncpg gets (the hub's own options removed) and those options; ``StorageError`` if bad."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    ours = {k: v for k, v in query if k in OPTIONS}
    options: dict[str, float] = {}
    for key, value in ours.items():
        try:
            options[key] = float(value)
        except ValueError:
            raise StorageError(f"storage.url {redact(url)!r}: {key}={value!r} is not a number; write e.g. "
                               f"?pool_size=10&statement_timeout=30") from None
        if options[key] <= 0:
            raise StorageError(f"storage.url {redact(url)!r}: {key} must be positive")
    scheme = "postgresql"
    dsn = urlunsplit((scheme, parts.netloc, parts.path, urlencode([(k, v) for k, v in query if k not in OPTIONS]),
                      parts.fragment))
    return dsn, options

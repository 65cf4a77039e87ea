"""What an anonymous caller may make the hub keep: a client's metadata (``/register`` or a metadata
document) and an authorization request (``/authorize``), each field bounded, and the redirect URIs a
client may name.

    problem = metadata_problem(client)      # None, or a sentence saying which field and its limit
    problem = redirect_problem("javascript:alert(1)")

A redirect URI is ``https``, ``http`` on a loopback address (``127.0.0.1``, ``[::1]``, ``localhost``:
a native host's listener, RFC 8252 §7.3) or a private-use scheme in reverse-DNS form
(``com.example.app:/callback``, RFC 8252 §7.1). Never ``javascript:``, ``data:``, ``file:`` or plain
``http`` to another host, and never with a fragment.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from mcp.shared.auth import OAuthClientMetadata

MAX_REDIRECT_URIS = 10
MAX_URI = 2048
MAX_NAME = 200
MAX_LIST = 10  # contacts, grant_types, response_types
MAX_JWKS = 8192  # characters of an inline key set
NAMES = ("client_name", "software_id", "software_version", "scope", "application_type",
         "token_endpoint_auth_method")
URIS = ("client_uri", "logo_uri", "tos_uri", "policy_uri", "jwks_uri")
LOOPBACK = ("127.0.0.1", "::1", "localhost")
PRIVATE_USE = re.compile(r"[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+")  # reverse DNS: com.example.app
# What one /authorize may store: a client sends these back unchanged, so bounding them takes nothing away.
MAX_STATE = 1024
MAX_SCOPE = 200
MAX_CHALLENGE = 128  # an S256 challenge is 43 characters
MAX_PENDING = 1000  # authorization requests waiting for consent, kept at once (each lives 10 minutes)
PARAMETERS = {"state": MAX_STATE, "scope": MAX_SCOPE, "code_challenge": MAX_CHALLENGE, "redirect_uri": MAX_URI,
              "resource": MAX_URI}


def redirect_problem(uri: str) -> str | None:
    """Why ``uri`` may not be a redirect URI, or None."""
    shown = repr(uri[:100])
    if len(uri) > MAX_URI:
        return f"redirect URI {shown}… is longer than {MAX_URI} characters"
    try:
        parts = urlsplit(uri)
    except ValueError:
        return f"redirect URI {shown} is not a URL"
    if parts.fragment or "#" in uri:
        return f"redirect URI {shown} has a fragment, which OAuth forbids"
    scheme = parts.scheme.lower()
    if scheme == "https" and parts.hostname:
        return None
    if scheme == "http" and parts.hostname in LOOPBACK:
        return None
    if PRIVATE_USE.fullmatch(scheme):
        return None
    return (f"redirect URI {shown} is not allowed: use https, http on a loopback address (127.0.0.1, [::1], "
            f"localhost) or a private-use scheme in reverse-DNS form such as com.example.app:/callback")


def metadata_problem(client: OAuthClientMetadata) -> str | None:
    """Why this client's metadata is more than the hub keeps (or names a redirect URI it refuses), or None."""
    if len(client.redirect_uris or []) > MAX_REDIRECT_URIS:
        return f"redirect_uris has {len(client.redirect_uris or [])} entries; at most {MAX_REDIRECT_URIS} are accepted"
    for name in NAMES:
        value = getattr(client, name, None)
        if isinstance(value, str) and len(value) > MAX_NAME:
            return f"{name} is {len(value)} characters long; at most {MAX_NAME} are accepted"
    for name in URIS:
        value = getattr(client, name, None)
        if value is not None and len(str(value)) > MAX_URI:
            return f"{name} is {len(str(value))} characters long; at most {MAX_URI} are accepted"
    for name in ("contacts", "grant_types", "response_types"):
        values: list[Any] = getattr(client, name, None) or []
        if len(values) > MAX_LIST:
            return f"{name} has {len(values)} entries; at most {MAX_LIST} are accepted"
        if any(len(str(v)) > MAX_NAME for v in values):
            return f"an entry of {name} is longer than {MAX_NAME} characters"
    if client.jwks is not None and len(str(client.jwks)) > MAX_JWKS:
        return f"jwks is longer than {MAX_JWKS} characters; publish it at a jwks_uri instead"
    for uri in client.redirect_uris or []:
        if problem := redirect_problem(str(uri)):
            return problem
    return None


def parameter_problem(params: dict[str, Any]) -> str | None:
    """Why an authorization request's parameters are longer than the hub keeps, or None."""
    for name, limit in PARAMETERS.items():
        value = params.get(name)
        if isinstance(value, str) and len(value) > limit:
            return f"{name} is {len(value)} characters long; at most {limit} are accepted"
    return None

"""Where a document's bytes come from: a file or a URL the hub may read, under ``docs.roots``.

    roots = Roots.parse(["~/notes", "https://docs.python.org/3/"], base_dir)
    data, name, content_type = await fetch_url("https://docs.python.org/3/tutorial/", roots, limits)

A root is a directory (a path) or a URL prefix (``http://`` or ``https://``). A file must resolve,
symbolic links followed, inside a root directory. A URL is first put in one spelling (``addresses``: dot
segments resolved, escapes decoded, case and default ports), must then lie under a root prefix by whole
path segments, and is fetched in that spelling; so must every redirect it answers with (each one put in
its spelling and checked before it is followed, at most ``MAX_REDIRECTS``).
Reading stops at ``max_bytes`` and ``timeout`` seconds; nothing outside the roots is ever opened, and
with no roots only text given inline is accepted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin

import anyio
import httpx2

from hermes_hub.infra.errors import InvalidInput
from hermes_hub.services.memory.addresses import MAX_URL_CHARS, Address

MAX_REDIRECTS = 5


@dataclass(frozen=True)
class Roots:
    directories: tuple[Path, ...]
    prefixes: tuple[str, ...]

    @classmethod
    def parse(cls, roots: list[str], base_dir: Path) -> Roots:
        dirs, prefixes = [], []
        for root in roots:
            if root.lower().startswith(("http://", "https://")):
                prefixes.append(root)
            else:
                path = Path(os.path.expanduser(root))
                dirs.append((path if path.is_absolute() else base_dir / path).resolve())
        return cls(tuple(dirs), tuple(prefixes))

    def addresses(self) -> list[Address]:
        out = []
        for prefix in self.prefixes:
            try:
                root = Address.parse(prefix)
            except InvalidInput as e:
                raise InvalidInput(f"hub.json's docs.roots entry {prefix} cannot be used: {e}; an admin must "
                                   f"correct it") from None
            if root.query or "#" in prefix:
                raise InvalidInput(f"hub.json's docs.roots entry {prefix} holds a query or fragment; a URL root "
                                   f"is a scheme, host and path prefix only: an admin must correct it")
            out.append(root)
        return out

    def admit(self, url: str) -> Address:
        """``url`` in its one spelling, if that lies under a root prefix; else InvalidInput saying why."""
        address = Address.parse(url)
        if not any(address.under(root) for root in self.addresses()):
            read_as = "" if str(address) == url else f" (it reads as {address})"
            raise _Outside(f"{url} is not under the URL prefixes this hub may read{read_as} (docs.roots: "
                           f"{', '.join(self.prefixes)})", read_as)
        return address


class _Outside(InvalidInput):
    """A URL read one way, and that way lies outside every root."""

    def __init__(self, message: str, read_as: str) -> None:
        super().__init__(message)
        self.read_as = read_as


def _no_roots(what: str) -> InvalidInput:
    return InvalidInput(f"this hub reads no {what}s: an admin lists the directories and URL prefixes it may read in "
                        f"hub.json's docs.roots; or pass the document's text instead")


async def read_file(path: str, roots: Roots, max_bytes: int) -> tuple[bytes, str]:
    """(bytes, file name) of ``path``, which must lie under a root directory."""
    if not roots.directories:
        raise _no_roots("file")

    def load() -> tuple[bytes, str]:
        given = Path(os.path.expanduser(path))
        if not given.is_absolute():
            given = roots.directories[0] / given
        real = given.resolve()
        if not any(real.is_relative_to(d) for d in roots.directories):
            raise InvalidInput(f"{path} is outside the directories this hub may read (docs.roots: "
                               f"{', '.join(str(d) for d in roots.directories)})")
        if not real.is_file():
            raise InvalidInput(f"{path}: no such file under docs.roots")
        with real.open("rb") as f:
            data = f.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise InvalidInput(f"{path} is larger than docs.max_bytes ({max_bytes:,} bytes); split it or raise the limit")
        return data, real.name

    return await anyio.to_thread.run_sync(load)


async def fetch_url(url: str, roots: Roots, max_bytes: int, timeout: float) -> tuple[bytes, str, str]:
    """(bytes, final URL, content type) of ``url``, following only redirects that stay under the roots."""
    if not roots.prefixes:
        raise _no_roots("URL")
    url = str(roots.admit(url))
    with anyio.move_on_after(timeout) as scope:  # the whole read, however slowly the bytes trickle in
        async with httpx2.AsyncClient(follow_redirects=False, timeout=httpx2.Timeout(timeout)) as http:
            for _ in range(MAX_REDIRECTS + 1):
                try:
                    async with http.stream("GET", url) as resp:
                        if resp.is_redirect:
                            target = urljoin(url, resp.headers.get("location", "")[:MAX_URL_CHARS + 1])
                            try:
                                target = str(roots.admit(target))  # each hop in its spelling, checked again
                            except _Outside as e:
                                raise InvalidInput(f"{url} redirects to {target}{e.read_as}, outside docs.roots "
                                                   f"({', '.join(roots.prefixes)}); add the document by its final "
                                                   f"URL if that one is under them") from None
                            except InvalidInput as e:
                                raise InvalidInput(f"{url} redirects to an address the hub will not follow: "
                                                   f"{e}") from None
                            url = target
                            continue
                        if resp.status_code != 200:
                            raise InvalidInput(f"{url} answered HTTP {resp.status_code}; check the address")
                        declared = resp.headers.get("content-length")
                        if declared and declared.isdigit() and int(declared) > max_bytes:
                            raise _too_large(url, max_bytes)
                        body = bytearray()
                        async for part in resp.aiter_bytes():
                            body += part
                            if len(body) > max_bytes:
                                raise _too_large(url, max_bytes)
                        return bytes(body), url, resp.headers.get("content-type", "")
                except httpx2.HTTPError as exc:
                    raise InvalidInput(f"cannot read {url}: {type(exc).__name__} {exc}".rstrip()) from exc
            raise InvalidInput(f"{url} redirects more than {MAX_REDIRECTS} times")
    assert scope.cancelled_caught
    raise InvalidInput(f"reading {url} took longer than docs.timeout ({timeout:g} s)")


def _too_large(url: str, max_bytes: int) -> InvalidInput:
    return InvalidInput(f"{url} is larger than docs.max_bytes ({max_bytes:,} bytes)")

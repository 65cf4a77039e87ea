"""Fetching a client ID metadata document, which anyone can make the hub do (``/authorize`` needs no
token), so the fetch can neither be pointed inward nor held open:

    body = await fetcher.get("https://app.example/oauth/client.json")   # bytes, or raises Refused

* the host's addresses are resolved first and every one must be public: loopback, private, link-local,
  unspecified, multicast and reserved ones are refused unless ``auth.client_metadata_private`` allows
  them. The request then goes to an address that was checked (TLS still verifies the host's name), so
  a second DNS answer cannot swap it. No redirect is followed and no proxy from the environment is used;
* the whole fetch (resolving, connecting, every byte) has one deadline, ``DEADLINE`` seconds;
* at most ``MAX_DOCUMENT`` bytes are read, as they stream in;
* at most ``IN_FLIGHT`` fetches run at once in the hub; one more is refused at once.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

import anyio
import httpx2

MAX_DOCUMENT = 64 * 1024
DEADLINE = 5.0
IN_FLIGHT = 4


class Refused(Exception):
    """Why a document was not fetched, as a clause ("it answered HTTP 404"), for the error and the log."""


class Busy(Refused):
    """Refused for the hub's sake (too many fetches at once), not the document's: worth trying again."""


def inward(address: str) -> bool:
    """True for an address a hub's neighbours have: loopback, private, link-local, unspecified, multicast."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return True  # not an address the hub can judge: not fetched
    if isinstance(ip, ipaddress.IPv6Address) and (ip.ipv4_mapped or ip.sixtofour):
        ip = ip.ipv4_mapped or ip.sixtofour  # type: ignore[assignment]
    return (ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_unspecified or ip.is_multicast
            or ip.is_reserved or not ip.is_global)


class Fetcher:
    def __init__(self, *, private: bool = False, deadline: float = DEADLINE, limit: int = MAX_DOCUMENT,
                 in_flight: int = IN_FLIGHT) -> None:
        self.private, self.deadline, self.limit, self.in_flight = private, deadline, limit, in_flight
        self.running = 0

    async def get(self, url: str) -> bytes:
        if self.running >= self.in_flight:
            raise Busy(f"the hub is already fetching {self.in_flight} client metadata documents, the most it fetches "
                       f"at once; try again in a few seconds")
        self.running += 1
        try:
            with anyio.move_on_after(self.deadline) as scope:
                return await self._get(url)
            assert scope.cancelled_caught
            raise Refused(f"it did not answer in full within {self.deadline:g} s")
        finally:
            self.running -= 1

    async def _addresses(self, host: str, port: int) -> list[str]:
        """The addresses of ``host``, once every one of them is allowed."""
        try:
            found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as e:
            raise Refused(f"its host {host[:100]!r} has no address ({type(e).__name__})") from None
        addresses = [str(info[4][0]) for info in found]
        if not addresses:
            raise Refused(f"its host {host[:100]!r} has no address")
        if not self.private:
            for address in addresses:
                if inward(address):
                    raise Refused(f"it is on a loopback, private or link-local address ({address}), which the hub does "
                                  f"not fetch client metadata documents from; an admin who means it sets "
                                  f"auth.client_metadata_private to true in hub.json")
        return list(dict.fromkeys(addresses))

    async def _get(self, url: str) -> bytes:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        addresses = await self._addresses(host, port)
        headers = {"accept": "application/json", "accept-encoding": "identity", "host": parts.netloc.rsplit("@", 1)[-1]}
        async with httpx2.AsyncClient(follow_redirects=False, trust_env=False, timeout=self.deadline) as http:
            for i, address in enumerate(addresses):
                pinned = f"[{address}]" if ":" in address else address
                target = parts._replace(netloc=f"{pinned}:{port}").geturl()
                try:
                    return await self._read(http, target, headers, host)
                except httpx2.ConnectError:
                    if i == len(addresses) - 1:
                        raise Refused("it could not be fetched (ConnectError)") from None
                except httpx2.HTTPError as e:
                    raise Refused(f"it could not be fetched ({type(e).__name__})") from None
        raise Refused("it could not be fetched")  # no address (not reached: _addresses found one)

    async def _read(self, http: httpx2.AsyncClient, target: str, headers: dict[str, str], host: str) -> bytes:
        async with http.stream("GET", target, headers=headers, extensions={"sni_hostname": host}) as response:
            if response.status_code != 200:
                raise Refused(f"it answered HTTP {response.status_code}")
            body = bytearray()
            async for chunk in response.aiter_raw():
                body += chunk
                if len(body) > self.limit:
                    raise Refused(f"it is larger than {self.limit} bytes")
            return bytes(body)

"""Wrong tokens per client address: a few a minute, then 429 until the oldest of them ages out. One
throttle per process counts the wrong bearer tokens sent to /mcp and the status page's logins together.

    throttle = Throttle(limit=5, window=60)
    if (wait := throttle.wait(address)) > 0: ...   # answer 429, Retry-After: ceil(wait)
    throttle.failed(address)                       # after a wrong token

Counted per address, so a guesser locks out only itself; an IPv6 client counts per /64 (one host
usually holds the whole prefix). The table is bounded: past ``addresses`` entries the least recently
failing one is forgotten. Each process counts its own (replicas behind a load balancer each allow
``limit``): a limit of guesses against tokens of 256 bits, not an account lockout.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable

log = logging.getLogger("hermes_hub.infra.throttle")

LIMIT = 5
WINDOW = 60.0
ADDRESSES = 10_000


def client_key(address: str) -> str:
    """The bucket of ``address``: itself for IPv4 (and names), its /64 for IPv6."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:  # ::ffff:1.2.3.4 is the IPv4 client 1.2.3.4
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


class Throttled(Exception):
    """Too many wrong tokens from this address: answer 429 with ``retry_after`` seconds."""

    def __init__(self, seconds: float) -> None:
        super().__init__(seconds)
        self.retry_after = max(1, math.ceil(seconds))

    @property
    def sentence(self) -> str:
        return (f"Too many wrong tokens from your address: try again in {self.retry_after} seconds. "
                "An admin creates a token with `hermes-hub token create USER`.")


class Throttle:
    def __init__(self, limit: int = LIMIT, window: float = WINDOW, *, addresses: int = ADDRESSES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.window, self.addresses, self._clock = limit, window, addresses, clock
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()

    def wait(self, address: str) -> float:
        """Seconds until ``address`` may try a token again (0: now)."""
        times = self._failures.get(client_key(address))
        if times is None or len(times) < self.limit:
            return 0.0
        return max(0.0, times[0] + self.window - self._clock())

    def check(self, address: str) -> None:
        """Raise ``Throttled`` while ``address`` may not try another token."""
        if (wait := self.wait(address)) > 0:
            raise Throttled(wait)

    def failed(self, address: str, where: str = "") -> None:
        """Count a wrong token from ``address`` (sent to ``where``, for the log line at the limit)."""
        self._count(address)
        if wait := self.wait(address):  # just crossed the limit: tell the operator, once per lockout
            log.warning("%d wrong tokens from %s within %g s%s; refusing it for %.0f s", self.limit, address,
                        self.window, f" (last at {where})" if where else "", wait)

    def _count(self, address: str) -> None:
        key = client_key(address)
        now = self._clock()
        times = self._failures.pop(key, None) or deque(maxlen=self.limit)
        while times and times[0] <= now - self.window:
            times.popleft()
        times.append(now)
        self._failures[key] = times  # now the most recent
        while len(self._failures) > self.addresses:
            self._failures.popitem(last=False)

"""Wrong tokens per client address: a few a minute, then 429 until the oldest of them ages out.

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
import time
from collections import OrderedDict, deque
from collections.abc import Callable

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

    def failed(self, address: str) -> None:
        key = client_key(address)
        now = self._clock()
        times = self._failures.pop(key, None) or deque(maxlen=self.limit)
        while times and times[0] <= now - self.window:
            times.popleft()
        times.append(now)
        self._failures[key] = times  # now the most recent
        while len(self._failures) > self.addresses:
            self._failures.popitem(last=False)

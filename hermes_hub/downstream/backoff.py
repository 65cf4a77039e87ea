"""When to try a failed server again: exponential backoff, crash-loop parking, reset after stable uptime.

Pure policy, no clock and no I/O: the connection reports how long each attempt stayed up, and gets
back how long to wait and whether the server is crash-looping.

    policy = Backoff(initial=1, maximum=60, stable_after=300, crash_loop_after=5)
    policy.failed(uptime=None)   # Retry(delay=1, crash_loop=False): never became READY
    policy.failed(uptime=2.0)    # Retry(delay=2, ...): up for 2 s only, a quick failure
    policy.failed(uptime=900.0)  # Retry(delay=1, ...): it had been stable, start over
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Retry:
    """Wait ``delay`` seconds, then try again; ``crash_loop``: the server keeps failing fast."""

    delay: float
    crash_loop: bool
    quick_failures: int  # in a row, this one included (0 if this one came after a stable run)


@dataclass
class Backoff:
    """Delays double from ``initial`` up to ``maximum`` while failures come quickly; ``crash_loop_after``
    quick failures in a row park the server at ``maximum``. A failure is quick when the server had
    been up (READY) less than ``stable_after`` seconds, or never. A stable run resets everything."""

    initial: float
    maximum: float
    stable_after: float
    crash_loop_after: int
    quick_failures: int = 0
    _next: float | None = None

    def failed(self, uptime: float | None) -> Retry:
        """Record a failure of an attempt that was READY for ``uptime`` seconds (``None``: never)."""
        if uptime is not None and uptime >= self.stable_after:
            self.quick_failures, self._next = 0, None
            return Retry(self._advance(), crash_loop=False, quick_failures=0)
        self.quick_failures += 1
        delay = self._advance()
        if self.quick_failures >= self.crash_loop_after:
            return Retry(self.maximum, crash_loop=True, quick_failures=self.quick_failures)
        return Retry(delay, crash_loop=False, quick_failures=self.quick_failures)

    def _advance(self) -> float:
        delay = self.initial if self._next is None else self._next
        self._next = min(self.maximum, delay * 2)
        return delay

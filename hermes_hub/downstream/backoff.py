"""When to try a failed server again: at once after a crash that followed a real run, with a growing
backoff for quick failures in a row, parked as a crash loop when they keep coming.

Pure policy, no clock and no I/O: the connection reports how long each attempt stayed up (READY),
and gets back how long to wait and whether the server is crash-looping.

    policy = Backoff(initial=1, maximum=60, stable_after=300, crash_loop_after=5)
    policy.failed(uptime=None)   # Retry(delay=1, ...): never became READY, a quick failure
    policy.failed(uptime=0.2)    # Retry(delay=2, ...): READY for a moment only, quick again
    policy.failed(uptime=40.0)   # Retry(delay=0, ...): it served a while (a crash, a kill): at once

A failure is *quick* when the attempt never became READY, or was READY for less than the delay it
would now wait (and at least ``MIN_RUN``). Restarting at once after a longer run cannot restart
more often than the backoff would, so only quick failures back off (the policy of 1MCP and of
supervisord's ``startsecs``). A run of ``stable_after`` seconds forgives every earlier failure.
"""

from __future__ import annotations

from dataclasses import dataclass

MIN_RUN = 1.0  # seconds READY; a server that dies sooner after it started is failing, not being killed


@dataclass(frozen=True)
class Retry:
    """Wait ``delay`` seconds, then try again; ``crash_loop``: the server keeps failing fast."""

    delay: float
    crash_loop: bool
    quick_failures: int  # in a row, this one included (0 if this one came after a real run)


@dataclass
class Backoff:
    """Delays double from ``initial`` up to ``maximum`` while failures come quickly; ``crash_loop_after``
    quick failures in a row park the server at ``maximum``. A failure after a real run (see the module
    docstring) restarts at once and clears the count."""

    initial: float
    maximum: float
    stable_after: float
    crash_loop_after: int
    quick_failures: int = 0
    _next: float | None = None

    def failed(self, uptime: float | None) -> Retry:
        """Record a failure of an attempt that was READY for ``uptime`` seconds (``None``: never)."""
        delay = self.initial if self._next is None else self._next
        if uptime is not None and uptime >= min(self.stable_after, max(delay, MIN_RUN)):
            self.quick_failures, self._next = 0, None
            return Retry(0.0, crash_loop=False, quick_failures=0)
        self.quick_failures += 1
        self._next = min(self.maximum, delay * 2)
        if self.quick_failures >= self.crash_loop_after:
            return Retry(self.maximum, crash_loop=True, quick_failures=self.quick_failures)
        return Retry(min(delay, self.maximum), crash_loop=False, quick_failures=self.quick_failures)

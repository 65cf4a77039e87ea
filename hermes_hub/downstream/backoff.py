"""When to try a failed server again: at once after a crash that followed a run, with a growing
backoff for quick failures in a row, parked as a crash loop when they keep coming.

Pure policy, no clock and no I/O: the connection reports how long each attempt stayed up (READY),
and gets back how long to wait and whether the server is crash-looping.

    policy = Backoff(initial=1, maximum=60, stable_after=300, crash_loop_after=5)
    policy.failed(uptime=None)   # Retry(delay=1, ...): never became READY, a quick failure
    policy.failed(uptime=0.2)    # Retry(delay=2, ...): READY for a moment only, quick again
    policy.failed(uptime=40.0)   # Retry(delay=0, ...): it had served (a crash, a kill): at once

A failure is *quick* when the attempt never became READY or was READY for less than ``MIN_RUN``:
only those back off, and ``crash_loop_after`` of them in a row park the server (the policy of
1MCP and of supervisord's ``startsecs``). A crash after a run restarts at once and ends the row;
the delay a later quick failure waits starts over only after a run of ``stable_after`` seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

MIN_RUN = 0.5  # seconds READY; a server that dies sooner after it came up is failing, not being killed


@dataclass(frozen=True)
class Retry:
    """Wait ``delay`` seconds, then try again; ``crash_loop``: the server keeps failing fast."""

    delay: float
    crash_loop: bool
    quick_failures: int  # in a row, this one included (0 if this one came after a real run)


@dataclass
class Backoff:
    """Delays double from ``initial`` up to ``maximum`` for quick failures; ``crash_loop_after`` of them
    in a row park the server at ``maximum``. A failure after a run (see the module docstring) restarts
    at once and ends the row."""

    initial: float
    maximum: float
    stable_after: float
    crash_loop_after: int
    quick_failures: int = 0
    _next: float | None = None

    def failed(self, uptime: float | None) -> Retry:
        """Record a failure of an attempt that was READY for ``uptime`` seconds (``None``: never)."""
        if uptime is not None and uptime >= min(self.stable_after, MIN_RUN):
            self.quick_failures = 0
            if uptime >= self.stable_after:
                self._next = None
            return Retry(0.0, crash_loop=False, quick_failures=0)
        self.quick_failures += 1
        delay = self.initial if self._next is None else self._next
        self._next = min(self.maximum, delay * 2)
        if self.quick_failures >= self.crash_loop_after:
            return Retry(self.maximum, crash_loop=True, quick_failures=self.quick_failures)
        return Retry(min(delay, self.maximum), crash_loop=False, quick_failures=self.quick_failures)

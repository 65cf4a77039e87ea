"""The scheduler's clock: wall time in a running hub, a clock the tests move in theirs.

    clock = ManualClock(datetime(2026, 12, 1, 9, tzinfo=UTC).timestamp())
    clock.advance(3600)        # an hour later, at once; the scheduler wakes and fires what came due

``HERMES_FAKE_NOW`` (an ISO 8601 time) is a test seam for subprocess hubs only: the hub's scheduler starts
its clock there and lets it run at real speed (``clock_from_env``). Nothing else reads it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import datetime

FAKE_NOW_ENV = "HERMES_FAKE_NOW"


class Clock:
    """Seconds since the epoch; ``on_change`` callbacks hear of a jump (a manual clock's)."""

    def __init__(self) -> None:
        self.listeners: list[Callable[[], None]] = []

    def now(self) -> float:
        return time.time()

    def moved(self) -> None:
        for listener in list(self.listeners):
            listener()


class ManualClock(Clock):
    """A clock that stands still until told: ``advance(seconds)`` or ``set(timestamp)``."""

    def __init__(self, start: float) -> None:
        super().__init__()
        self._now = start

    def now(self) -> float:
        return self._now

    def set(self, when: float) -> None:
        self._now = when
        self.moved()

    def advance(self, seconds: float) -> None:
        self.set(self._now + seconds)


class OffsetClock(Clock):
    """Real time shifted to start at ``start`` (``HERMES_FAKE_NOW``)."""

    def __init__(self, start: float) -> None:
        super().__init__()
        self._offset = start - time.time()

    def now(self) -> float:
        return time.time() + self._offset


def clock_from_env(env: dict[str, str] | None = None) -> Clock:
    raw = (os.environ if env is None else env).get(FAKE_NOW_ENV)
    if not raw:
        return Clock()
    try:
        return OffsetClock(datetime.fromisoformat(raw).timestamp())
    except ValueError:
        raise ValueError(f"{FAKE_NOW_ENV}={raw!r} is not an ISO 8601 time with its offset, e.g. "
                         f"2026-12-01T09:00:00+01:00 (a test seam; unset it to use the real clock)") from None

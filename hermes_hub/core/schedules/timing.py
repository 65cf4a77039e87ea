"""When a schedule is due: ``at`` an instant, ``every`` an interval, or a five-field ``cron`` in its zone.

    Timing.of("cron", "30 8 * * 1-5", "Europe/Berlin").after(now)   # the next weekday 08:30 in Berlin

Cron is ``cronsim`` (healthchecks.io's): across a DST change a 02:30 that does not exist fires once (at
03:00) and a repeated 02:30 fires once. Intervals count real seconds from the schedule's anchor.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from hermes_hub.infra.errors import InvalidInput

MIN_INTERVAL = 60.0  # seconds; anything more often is not a schedule but a loop
MAX_INTERVAL = 366 * 86400.0
MAX_SPEC = 200  # characters of a cron expression or interval
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_INTERVAL = re.compile(r"(?:(\d{1,6})\s{0,2}([smhdw]))+")
_PART = re.compile(r"(\d{1,6})\s{0,2}([smhdw])")


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidInput(f"timezone {name[:64]!r} is not an IANA zone name; write e.g. 'Europe/Berlin' or "
                           f"'Asia/Shanghai'") from None


def interval(text: str | int | float) -> float:
    """``"90m"``, ``"1h30m"``, ``"1d"`` or a number of seconds; at least a minute, at most a year."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        seconds = float(text)
    elif (digits := str(text).strip()).isdigit() and len(digits) <= 9:  # seconds, written as text
        seconds = float(digits)
    else:
        spec = str(text).strip().lower()[:MAX_SPEC]
        if not _INTERVAL.fullmatch(spec.replace(" ", "")):
            raise InvalidInput(f"every {str(text)[:64]!r} is not an interval; write e.g. '15m', '2h', '1d', '1h30m' "
                               f"or a number of seconds")
        seconds = float(sum(int(n) * _UNITS[u] for n, u in _PART.findall(spec.replace(" ", ""))))
    if not MIN_INTERVAL <= seconds <= MAX_INTERVAL:
        raise InvalidInput(f"every {str(text)[:64]!r} is {seconds:g} s; an interval is at least a minute and at "
                           f"most a year")
    return seconds


def written(seconds: float) -> str:
    """An interval the way ``every`` is written: 86400 -> ``1d``, 5400 -> ``1h30m``, 90 -> ``1m30s``."""
    left, parts = int(seconds), []
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if left >= size:
            parts.append(f"{left // size}{unit}")
            left %= size
    return "".join(parts) or "0s"


def instant(text: str, tz: ZoneInfo) -> float:
    """An ISO 8601 time; one without an offset is a wall time in ``tz``."""
    try:
        when = datetime.fromisoformat(str(text)[:64])
    except ValueError:
        raise InvalidInput(f"at {str(text)[:64]!r} is not an ISO 8601 time; write e.g. 2026-12-02T10:00:00+01:00 "
                           f"(resolve words like 'tomorrow at ten' with hermes_time_resolve first)") from None
    return (when.replace(tzinfo=tz) if when.tzinfo is None else when).timestamp()


@dataclass(frozen=True)
class Timing:
    kind: str  # "at" | "every" | "cron"
    spec: str  # normalised: an ISO instant, seconds, or the cron expression
    timezone: str

    @classmethod
    def of(cls, kind: str, spec: str | int | float, timezone: str) -> Timing:
        tz = zone(timezone)
        if kind == "at":
            return cls(kind, datetime.fromtimestamp(instant(str(spec), tz), tz).isoformat(), timezone)
        if kind == "every":
            return cls(kind, repr(interval(spec)), timezone)
        if kind == "cron":
            expr = " ".join(str(spec).split())[:MAX_SPEC]
            if len(expr.split(" ")) != 5:
                raise InvalidInput(f"cron {expr!r} needs five fields (minute hour day month weekday), e.g. "
                                   f"'30 8 * * 1-5' for weekdays at 08:30")
            try:
                next(iter(CronSim(expr, datetime.now(tz))))
            except (CronSimError, StopIteration) as e:
                raise InvalidInput(f"cron {expr!r} is not valid ({e}); e.g. '0 17 * * 5' is Fridays at 17:00") from None
            return cls(kind, expr, timezone)
        raise InvalidInput(f"a schedule is 'at', 'every' or 'cron', not {kind!r}")

    @property
    def recurring(self) -> bool:
        return self.kind != "at"

    def first(self, now: float, anchor: float) -> float | None:
        """The first due time from ``now`` on (an ``at`` in the past: None); an interval's is one interval on."""
        if self.kind == "at":
            at = datetime.fromisoformat(self.spec).timestamp()
            return at if at >= now else None
        return self.after(now if self.kind == "every" else now - 1e-6, anchor)

    def after(self, t: float, anchor: float) -> float | None:
        """The first due time strictly after ``t``; ``anchor`` starts an interval's count."""
        if self.kind == "at":
            at = datetime.fromisoformat(self.spec).timestamp()
            return at if at > t else None
        if self.kind == "every":  # from the previous due time (or from ``anchor``, if later)
            step = float(self.spec)
            return max(t, anchor) + step
        tz = zone(self.timezone)
        return next(iter(CronSim(self.spec, datetime.fromtimestamp(t, tz)))).timestamp()


def jitter(schedule_id: str, due: float, most: float) -> float:
    """A spread in [0, most) that every replica computes alike for the same occurrence."""
    if most <= 0:
        return 0.0
    digest = hashlib.sha256(f"{schedule_id}:{due!r}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 * most

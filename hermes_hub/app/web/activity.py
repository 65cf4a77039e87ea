"""Calls per minute and error rate per server over the last hour, from the audit, as inline SVG.

    lines = per_server(rows, now)            # {"notes": Activity(calls=[...60], errors=[...60])}
    svg = sparkline(lines["notes"])          # a small <svg>: calls as a line, errors as red bars
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from markupsafe import Markup

from hermes_hub.infra.storage.records import AuditRecord

MINUTES = 60
WIDTH, HEIGHT = 120, 24


@dataclass
class Activity:
    calls: list[int] = field(default_factory=lambda: [0] * MINUTES)  # oldest minute first
    errors: list[int] = field(default_factory=lambda: [0] * MINUTES)

    @property
    def total(self) -> int:
        return sum(self.calls)

    @property
    def error_rate(self) -> float:
        return sum(self.errors) / self.total if self.total else 0.0

    def as_dict(self) -> dict[str, object]:
        return {"calls_per_minute": self.calls, "errors_per_minute": self.errors, "calls": self.total,
                "error_rate": round(self.error_rate, 3)}


def per_server(rows: Iterable[AuditRecord], now: datetime) -> dict[str, Activity]:
    """Bucket ``rows`` of the last hour by server and minute; a call without a server counts as the hub's."""
    start = now - timedelta(minutes=MINUTES)
    out: dict[str, Activity] = {}
    for row in rows:
        if row.at < start or row.at > now:
            continue
        minute = min(MINUTES - 1, int((row.at - start).total_seconds() // 60))
        line = out.setdefault(row.server or "hermes", Activity())
        line.calls[minute] += 1
        if row.outcome != "ok":
            line.errors[minute] += 1
    return out


def sparkline(line: Activity | None) -> Markup:
    """An SVG of the hour: calls per minute as a polyline, minutes with errors as red bars under it."""
    line = line or Activity()
    top = max(max(line.calls), 1)
    step = WIDTH / (MINUTES - 1)
    points = " ".join(f"{i * step:.1f},{HEIGHT - 1 - c / top * (HEIGHT - 2):.1f}" for i, c in enumerate(line.calls))
    bars = "".join(
        f'<rect x="{i * step - 1:.1f}" y="{HEIGHT - e / top * (HEIGHT - 2):.1f}" width="2" '
        f'height="{e / top * (HEIGHT - 2):.1f}" class="err"/>'
        for i, e in enumerate(line.errors) if e)
    label = f"{line.total} calls in the last hour, {line.error_rate:.0%} errors"
    return Markup(f'<svg class="spark" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" '
                  f'aria-label="{label}"><title>{label}</title>{bars}'
                  f'<polyline points="{points}" class="calls"/></svg>')

"""Calls per minute and error rate per server, from audit rows, and their inline SVG."""

from __future__ import annotations

from datetime import timedelta

from hermes_hub.infra.storage.records import AuditRecord, utcnow
from hermes_hub.app.web.activity import MINUTES, per_server, sparkline


def row(ago_minutes: float, server: str | None, outcome: str = "ok") -> AuditRecord:
    return AuditRecord(at=utcnow() - timedelta(minutes=ago_minutes), user_id="ana", tool="t", outcome=outcome,
                       duration_ms=1.0, server=server)


def test_calls_fall_into_their_minute_per_server_and_older_ones_are_left_out():
    now = utcnow()
    lines = per_server([row(0.5, "notes"), row(0.6, "notes", "error"), row(30.2, "notes"), row(90, "notes"),
                        row(1.5, None, "timeout")], now)
    notes = lines["notes"]
    assert len(notes.calls) == MINUTES and notes.total == 3
    assert notes.calls[-1] == 2 and notes.errors[-1] == 1 and notes.calls[29] == 1
    assert round(notes.error_rate, 2) == 0.33
    assert lines["hermes"].errors[-2] == 1  # the hub's own tools have no server


def test_the_sparkline_is_inline_svg_with_error_bars_and_a_readable_label():
    svg = str(sparkline(per_server([row(0.5, "notes"), row(0.5, "notes", "tool_error")], utcnow())["notes"]))
    assert svg.startswith("<svg") and "<polyline" in svg and 'class="err"' in svg
    assert 'aria-label="2 calls in the last hour, 50% errors"' in svg
    assert 'class="err"' not in str(sparkline(None))

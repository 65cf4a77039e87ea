"""When schedules are due: cron across Berlin's DST changes (cronsim), intervals, one-offs, jitter's bounds,
and the errors a person can act on."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from hermes_hub.infra.errors import InvalidInput
from hermes_hub.core.schedules.timing import Timing, interval, jitter, written

BERLIN = ZoneInfo("Europe/Berlin")


def walk(timing: Timing, start: datetime, n: int) -> list[str]:
    t, out = start.timestamp(), []
    for _ in range(n):
        t = timing.after(t, 0)
        out.append(datetime.fromtimestamp(t, BERLIN).isoformat())
    return out


def test_a_daily_0230_in_berlin_fires_once_on_the_night_it_does_not_exist_and_once_on_the_night_it_repeats():
    cron = Timing.of("cron", "30 2 * * *", "Europe/Berlin")
    assert walk(cron, datetime(2026, 3, 28, 12, tzinfo=BERLIN), 3) == [
        "2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00",
        "2026-03-31T02:30:00+02:00"]
    assert walk(cron, datetime(2026, 10, 24, 12, tzinfo=BERLIN), 2) == [
        "2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"]  # 02:30 came twice that night: it ran once


def test_weekday_mornings_stay_at_0830_local_across_the_change():
    cron = Timing.of("cron", "30 8 * * 1-5", "Europe/Berlin")
    assert walk(cron, datetime(2026, 3, 27, 9, tzinfo=BERLIN), 2) == [
        "2026-03-30T08:30:00+02:00", "2026-03-31T08:30:00+02:00"]


def test_an_interval_counts_real_seconds_from_its_anchor_and_accepts_people_s_units():
    every = Timing.of("every", "1h30m", "UTC")
    assert (every.after(100.0, 100.0), every.after(100.0 + 5400, 100.0)) == (5500.0, 10900.0)
    assert interval("2h") == 7200 and interval(90) == 90 and interval("1d") == 86400
    assert interval("3600") == 3600 and interval(" 90 ") == 90  # seconds as digits: the tool types every as a string


@pytest.mark.parametrize("spec", ["15m", "1h30m", "1d", "1w2d", "1m30s"])
def test_an_interval_is_shown_the_way_it_is_written(spec):
    assert written(interval(spec)) == spec  # the status page and `schedules` say "every 1d", not 86400.0


def test_a_one_off_is_due_once_and_never_after():
    at = Timing.of("at", "2026-12-02T10:00:00", "Europe/Berlin")  # no offset: a wall time in the zone
    due = datetime(2026, 12, 2, 10, tzinfo=BERLIN).timestamp()
    assert at.first(due - 60, 0) == due and at.after(due, 0) is None and at.first(due + 1, 0) is None


def test_jitter_stays_within_its_bound_and_every_replica_computes_the_same():
    values = [jitter(f"sch_{i}", 1000.0, 30) for i in range(500)]
    assert all(0 <= v < 30 for v in values) and max(values) - min(values) > 20  # spread, not one second
    assert jitter("sch_1", 1000.0, 30) == jitter("sch_1", 1000.0, 30) and jitter("sch_1", 1000.0, 0) == 0


@pytest.mark.parametrize(("kind", "spec", "zone", "says"), [
    ("cron", "30 8 * *", "UTC", "needs five fields"),
    ("cron", "61 8 * * *", "UTC", "is not valid"),
    ("every", "5s", "UTC", "at least a minute"),
    ("every", "often", "UTC", "write e.g. '15m'"),
    ("at", "tomorrow at ten", "UTC", "hermes_time_resolve"),
    ("at", "2026-12-02T10:00:00", "Mars/Olympus", "not an IANA zone"),
])
def test_bad_timings_say_what_to_write(kind, spec, zone, says):
    with pytest.raises(InvalidInput, match=says):
        Timing.of(kind, spec, zone)


def test_utc_offsets_in_an_at_are_kept_as_given():
    at = Timing.of("at", "2026-12-02T09:00:00Z", "Europe/Berlin")
    assert at.first(0, 0) == datetime(2026, 12, 2, 9, tzinfo=UTC).timestamp()

"""A time span, and a text read against a reference time: the calendar arithmetic the rules use."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo


@dataclass(frozen=True)
class TimeSpan:
    """``[start, end)``, both timezone-aware."""

    start: datetime
    end: datetime

    def __contains__(self, t: datetime) -> bool:
        return self.start <= t < self.end


FUTURE = re.compile(r"(?<![a-z])(?:will|going\s{1,3}to|gonna|plan|plans|planning|upcoming|intend|intends)(?![a-z])"
                    r"|'ll(?![a-z])|将要|将会|打算|准备|计划|预计|要去|要在")


# Words before an expression that belong to it: "on the 7th of May", "in mid-August": at most one
# modifier next to it, and one preposition before that.
LEAD = re.compile(r"(?<![a-z])(in|on|during|at|since|from|of|by|until|through|early|mid|late|the)(?:\s{1,3}|-)$")
MODIFIERS = ("the", "early", "mid", "late")


class Reading:
    """A text read against a reference time: the day it counts from, and the calendar arithmetic rules use."""

    def __init__(self, text: str, ref: datetime) -> None:
        if not isinstance(ref, datetime):
            raise TypeError(f"ref must be a datetime, got {type(ref).__name__}")
        self.text = text
        # lower case keeps every position but for U+0130 (İ → i̇): patterns then need no IGNORECASE,
        # which would cost several times more per character scanned
        self.subject = text.replace("\u0130", "i").lower()
        self._has: dict[re.Pattern[str], bool] = {}
        self.ref = ref if ref.tzinfo is not None else ref.replace(tzinfo=UTC)
        self.tz: tzinfo = self.ref.tzinfo  # type: ignore[assignment]
        self.day = self.ref.date()

    def has(self, script: re.Pattern[str]) -> bool:
        """Whether the text has a character of ``script`` at all (asked once per script, then remembered)."""
        if script not in self._has:
            self._has[script] = script.search(self.subject) is not None
        return self._has[script]

    def bounded(self, m: re.Match[str], before: str) -> bool:
        """The match does not continue a word or number: the character before it is not in ``before``."""
        return m.start() == 0 or self.subject[m.start() - 1] not in before

    def lead(self, start: int) -> int:
        """Where the expression starts once the words that lead into it are counted."""
        allowed = ("modifier", "preposition")
        while allowed and start and (found := LEAD.search(self.subject, max(0, start - 16), start)):
            kind = "modifier" if found.group(1) in MODIFIERS else "preposition"
            if kind not in allowed:
                break
            start, allowed = found.start(), allowed[allowed.index(kind) + 1:]
        return start

    def future(self, m: re.Match[str]) -> bool:
        """A future word near the match: an undated month or day then means the next one."""
        return FUTURE.search(self.subject, max(0, m.start() - 40), m.end() + 40) is not None

    def at(self, d: date, hours: int = 0) -> datetime:
        return datetime(d.year, d.month, d.day, tzinfo=self.tz) + timedelta(hours=hours)

    def days(self, first: date, count: int = 1) -> TimeSpan:
        return TimeSpan(self.at(first), self.at(first + timedelta(days=count)))

    def week(self, d: date, offset: int = 0) -> TimeSpan:
        return self.days(monday(d) + timedelta(weeks=offset), 7)

    def month(self, year: int, month: int) -> TimeSpan:
        y, m = shift(year, month, 0)
        ny, nm = shift(year, month, 1)
        return TimeSpan(self.at(date(y, m, 1)), self.at(date(ny, nm, 1)))

    def year(self, year: int) -> TimeSpan:
        return TimeSpan(self.at(date(year, 1, 1)), self.at(date(year + 1, 1, 1)))

    def part(self, d: date, part: str) -> TimeSpan:
        start, end = PARTS[part]
        return TimeSpan(self.at(d, start), self.at(d, end))

    def undated(self, m: re.Match[str], month: int, day: int | None) -> TimeSpan | None:
        """A month (or month and day) without a year: the nearest one not after ref, or not before it
        when a future word is near."""
        ahead = self.future(m)
        step = 1 if ahead else -1
        for year in range(self.day.year, self.day.year + 9 * step, step):  # 9 years: room for a Feb 29
            if day is None:
                here = (self.day.year, self.day.month)
                if ((year, month) >= here) if ahead else ((year, month) <= here):
                    return self.month(year, month)
                continue
            try:
                d = date(year, month, day)
            except ValueError:
                continue
            if (d >= self.day) if ahead else (d <= self.day):
                return self.days(d)
        return None

    def ago(self, n: int, unit: str, lo: int | None = None) -> TimeSpan:
        """``n`` units back (forward if negative); with ``lo``, the units from ``n`` back to ``lo`` back."""
        near = n if lo is None else lo
        if unit == "day":
            first, last = self.day - timedelta(days=n), self.day - timedelta(days=near)
            return TimeSpan(self.at(first), self.at(last + timedelta(days=1)))
        if unit == "week":
            return TimeSpan(self.week(self.day - timedelta(weeks=n)).start,
                            self.week(self.day - timedelta(weeks=near)).end)
        if unit == "month":
            return TimeSpan(self.month(*shift(self.day.year, self.day.month, -n)).start,
                            self.month(*shift(self.day.year, self.day.month, -near)).end)
        return TimeSpan(self.year(self.day.year - n).start, self.year(self.day.year - near).end)


def monday(d: date) -> date:
    return d - timedelta(days=d.weekday())


def shift(year: int, month: int, months: int) -> tuple[int, int]:
    y, m = divmod(year * 12 + month - 1 + months, 12)
    return y, m + 1


PARTS = {"morning": (6, 12), "noon": (11, 14), "afternoon": (12, 18), "evening": (18, 24), "night": (18, 30),
          "dawn": (0, 6)}


def months_back(d: date, months: int) -> date:
    y, m = shift(d.year, d.month, -months)
    for day in (d.day, 30, 29, 28):
        try:
            return date(y, m, day)
        except ValueError:
            continue
    raise ValueError(d)

"""Times of day and offsets from now, over the day expressions of ``timeparse``: what a reminder needs.

    times("remind me tomorrow at 10", now)       # [When(start=<tomorrow 10:00 in now's zone>, end=same, all_day=False)]
    times("下周一上午十点", now)                  # next week's Monday, 10:00
    times("in two hours", now)                    # now + 2 h, counted in absolute time (right across a DST change)

Readings where language leaves a choice:

* a clock time joins the day expression next to it ("tomorrow at 10", "at 10 tomorrow", 明天上午十点);
  without one it is its next occurrence: "at 10" said at 23:00 is tomorrow's 10:00;
* an hour 1–6 with no am/pm and no part of the day (上午, 下午, "morning") is taken as the afternoon
  ("tomorrow at 3" is 15:00); 下午/晚上/"afternoon"/"evening"/"pm" move hours before 12 past noon;
* a wall time is built in the zone (10:00 is 10:00 local on a DST day too); "in N hours" is counted
  in absolute time, so across a change it lands N real hours later;
* a day with no clock time is the whole day (``all_day``), a part of the day its hours.

Every repetition is bounded: the scan stays linear in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from hermes_hub.services.memory.timeparse import mentions
from hermes_hub.services.memory.timeparse.rules import number

MAX_CHARS = 2000  # the longest text read
GAP = 12  # characters that may separate a clock time from its day ("tomorrow morning at 10")
_HOUR_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
_CN_NUM = "[0-9一二两三四五六七八九十零]{1,3}+"
_EN_CLOCK = re.compile(
    rf"(?<![a-z0-9])(?:(?:at|@|by|around)\s{{0,3}}+(?P<h>[0-9]{{1,2}}|{_HOUR_WORDS})(?::(?P<m>[0-9]{{2}}))?"
    rf"|(?P<h2>[0-9]{{1,2}})(?::(?P<m2>[0-9]{{2}}))?(?=\s{{0,2}}(?:am|pm|a\.m\.|p\.m\.|o'?clock))"
    rf"|(?P<h3>[0-9]{{1,2}}):(?P<m3>[0-9]{{2}}))"
    rf"(?:\s{{0,2}}+(?P<ap>am|pm|a\.m\.|p\.m\.)|\s{{0,2}}+o'?clock)?(?![a-z0-9])"
    rf"|(?<![a-z])(?P<word>noon|midday|midnight)(?![a-z])")
_CN_CLOCK = re.compile(
    rf"(?P<part>早上|早晨|上午|中午|下午|傍晚|晚上|夜里|凌晨)?\s{{0,2}}+(?P<h>{_CN_NUM})\s{{0,2}}+[点點时]"
    rf"(?:\s{{0,2}}+(?P<half>半)|(?P<quarter>一刻|三刻)|\s{{0,2}}+(?P<m>{_CN_NUM})\s{{0,2}}+分?)?")
_EN_PART = re.compile(r"(?<![a-z])(morning|afternoon|evening|tonight|night)(?![a-z])")
_LATER = {"am": False, "a.m.": False, "pm": True, "p.m.": True, "下午": True, "晚上": True, "傍晚": True,
          "夜里": True, "中午": None, "早上": False, "早晨": False, "上午": False, "凌晨": False,
          "morning": False, "afternoon": True, "evening": True, "tonight": True, "night": True}
_OFFSET = re.compile(
    rf"(?<![a-z])(?:in\s{{1,3}}+(?P<n>[0-9]{{1,4}}|an?|{_HOUR_WORDS}|half\s{{1,3}}an?)\s{{1,3}}+"
    rf"(?P<unit>hours?|hrs?|minutes?|mins?)(?![a-z])"
    rf"|(?P<n2>[0-9]{{1,4}}|an?|{_HOUR_WORDS})\s{{1,3}}+(?P<unit2>hours?|minutes?|mins?)\s{{1,3}}+from\s{{1,3}}now)"
    rf"|(?P<cn>[0-9一二两三四五六七八九十]{{1,4}}+|半)\s{{0,2}}+(?P<cnunit>个\s{{0,2}}(?:半\s{{0,2}})?小时|小时|钟头|分钟)"
    rf"\s{{0,2}}+(?:以后|之后|后)")


@dataclass(frozen=True)
class When:
    text: str  # the words that named it
    start: datetime
    end: datetime  # an instant: equal to start; a day or part of one: where it ends (exclusive)
    all_day: bool


def times(text: str, now: datetime) -> list[When]:
    """Every time ``text`` names, in order, read against ``now`` (aware; its zone is the person's)."""
    if now.tzinfo is None:
        raise ValueError("now must carry a timezone")
    if len(text) > MAX_CHARS:
        raise ValueError(f"the text has {len(text):,} characters; give at most {MAX_CHARS:,}, the time words alone")
    subject = text.lower()
    found: list[tuple[int, When]] = []
    for m in _OFFSET.finditer(subject):
        instant = (now.astimezone(UTC) + _offset(m)).astimezone(now.tzinfo)
        found.append((m.start(), When(text[m.start():m.end()], instant, instant, False)))
    days = [d for d in mentions(text, now) if not _inside(d.start, d.end, found)]
    used: set[int] = set()
    for m in [*_EN_CLOCK.finditer(subject), *_CN_CLOCK.finditer(subject)]:
        if _inside(m.start(), m.end(), found):
            continue
        hour, minute = _clock(m, subject, days)
        near = next((i for i, d in enumerate(days) if d.start - GAP <= m.end() and m.start() <= d.end + GAP
                     and d.span.end - d.span.start <= timedelta(days=1)), None)
        if near is not None:
            used.add(near)
            day = days[near].span.start.date()
            start = min(m.start(), days[near].start)
            words = text[start:max(m.end(), days[near].end)]
        else:
            day, start, words = now.date(), m.start(), text[m.start():m.end()]
        at = datetime(day.year, day.month, day.day, tzinfo=now.tzinfo) + timedelta(hours=hour, minutes=minute)
        if near is None and at <= now:
            at += timedelta(days=1)  # "at 10" after ten o'clock: tomorrow's
        found.append((start, When(words.strip(), at, at, False)))
    for i, d in enumerate(days):
        if i not in used:
            whole = d.span.start.hour == d.span.start.minute == 0 and d.span.end.time() == d.span.start.time()
            found.append((d.start, When(d.text, d.span.start, d.span.end, whole and d.span.end > d.span.start)))
    return [w for _, w in sorted(found, key=lambda f: f[0])]


def _offset(m: re.Match[str]) -> timedelta:
    if m["cn"]:
        unit = m["cnunit"]
        n = 0.5 if m["cn"] == "半" else float(number(m["cn"]))
        if "半" in unit:
            n += 0.5
        return timedelta(minutes=n) if unit == "分钟" else timedelta(hours=n)
    raw, unit = " ".join((m["n"] or m["n2"]).split()), m["unit"] or m["unit2"]
    n = 0.5 if raw.startswith("half") else 1.0 if raw in ("a", "an") else float(number(raw))
    return timedelta(hours=n) if unit.startswith("h") else timedelta(minutes=n)


def _clock(m: re.Match[str], subject: str, days: list) -> tuple[int, int]:
    """(hour 0-23, minute) of a clock match, its am/pm read from the match or the words around it."""
    if m.re is _EN_CLOCK and m["word"]:
        return (0, 0) if m["word"] == "midnight" else (12, 0)
    if m.re is _CN_CLOCK:
        hour = number(m["h"])
        minute = 30 if m["half"] else (15 if m["quarter"] == "一刻" else 45) if m["quarter"] else \
            number(m["m"]) if m["m"] else 0
        later = _LATER.get(m["part"] or _nearby_part(subject, m, days, "cn") or "", "")
    else:
        raw = m["h"] or m["h2"] or m["h3"]
        hour = number(raw)
        minute = int(m["m"] or m["m2"] or m["m3"] or 0)
        later = _LATER.get(m["ap"] or _nearby_part(subject, m, days, "en") or "", "")
    if not (0 <= hour <= 24 and 0 <= minute < 60):
        raise ValueError(f"{m.group().strip()!r} is not a time of day")
    if later is None:  # 中午: 12 and 1 o'clock are both around noon
        return (hour + 12 if hour < 6 else hour) % 24, minute
    if later is True and hour < 12:
        hour += 12
    elif later == "" and 1 <= hour <= 6:
        hour += 12  # "tomorrow at 3": the afternoon
    elif later is False and hour == 12:
        hour = 0  # 12 am
    return hour % 24, minute


def _nearby_part(subject: str, m: re.Match[str], days: list, script: str) -> str | None:
    """A part of the day named just before the clock time ("tomorrow afternoon at 3", 明天下午三点)."""
    window = subject[max(0, m.start() - GAP * 2):m.start()]
    if script == "cn":
        found = [p for p in ("早上", "早晨", "上午", "中午", "下午", "傍晚", "晚上", "夜里", "凌晨") if p in window]
        return found[-1] if found else None
    hits = _EN_PART.findall(window)
    return hits[-1] if hits else None


def _inside(start: int, end: int, found: list[tuple[int, When]]) -> bool:
    """Whether ``[start, end)`` overlaps an offset already read ("in two hours" is not a day)."""
    return any(s < end and start < s + len(w.text) for s, w in found)

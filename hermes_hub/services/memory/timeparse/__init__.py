"""Time expressions in English and Chinese, turned into the absolute span they name.

    resolve("I moved to Oslo last week", ref=said_at)       # TimeSpan(Mon 00:00 of the week before, +7 days)
    query_window("上个月我去了哪里", now)                       # QueryTime(span=<last month>, rest="我去了哪里")

``resolve`` gives a message's event time: relative words ("yesterday", "上周五", "three days ago") are
read against ``ref``, the time the message was said. ``query_window`` does the same for a recall
query and also returns the query without the time words, so lexical search does not look for them.

Spans are half-open ``[start, end)`` and carry ``ref``'s timezone (a naive ``ref`` is UTC); a day is
midnight to midnight there. The readings chosen where language is ambiguous:

* weeks run Monday to Sunday (ISO, and how 上周/下周 are meant); "this weekend" is that week's Saturday
  and Sunday, so on a Sunday it is the weekend under way;
* "last Friday" is the most recent Friday before ref's day, "next Friday" the first one after it,
  "this Friday" the one of ref's week; 上周五 / 下周五 / 这周五 are the Friday of the previous / next /
  current week;
* "N weeks ago" is the week holding the day N×7 days back (so "a week ago" is "last week"); "N months
  ago" and "N years ago" likewise name the whole calendar month or year;
* "a few" / "several" / 几 mean 2 to 5: "a few days ago" spans the days 5 to 2 days before ref;
* a month or day without a year ("in May", "May 7", 五月, 5月7日) is the most recent one not after ref
  (memories and questions are mostly about the past), unless a future word stands near it ("will",
  "going to", "plan", 打算, 准备, 计划, 要去…): then the next one not before ref. "last May" is the May
  before ref's month, "next May" the one after, "this May" the one of ref's year;
* a bare month name needs a preposition or modifier ("in May", "last March"): "I may go" is no date;
  a bare year needs one too ("in 2023", 2023年); bare weekdays ("on Friday", 周五) are left alone,
  their direction unknown;
* "since May" runs from May to the end of ref's day;
* parts of the day: morning 06–12, noon 11–14, afternoon 12–18, evening 18–24, night 18–06 of the
  next day (so "last night" ends at 06:00 of ref's day), 凌晨 00–06.

Every pattern's repetitions are bounded, so the scan is linear in the text: a megabyte parses in
well under a second.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from hermes_hub.services.memory.timeparse import chinese, english  # noqa: F401  (importing them registers their rules)
from hermes_hub.services.memory.timeparse.reading import Reading, TimeSpan
from hermes_hub.services.memory.timeparse.rules import MAX_MENTIONS, SCANS

__all__ = ["Mention", "QueryTime", "TimeSpan", "mentions", "query_window", "resolve"]


@dataclass(frozen=True)
class Mention:
    """A time expression found in a text: where it is and what it names."""

    start: int
    end: int
    text: str
    span: TimeSpan


@dataclass(frozen=True)
class QueryTime:
    span: TimeSpan  # every time expression of the query, joined
    rest: str  # the query without them


def mentions(text: str, ref: datetime) -> list[Mention]:
    """Every time expression of ``text`` (the first ``MAX_MENTIONS``), in order, read against ``ref``."""
    k = Reading(text if isinstance(text, str) else "", ref)
    hits = sorted((hit for r in SCANS for hit in r.scan(k)), key=lambda h: (h[0].start(), -h[0].end()))
    found: list[Mention] = []
    for m, span in hits:
        if found and m.start() < found[-1].end:
            continue  # inside or across the one before ("2023" of "2023年5月"); the longest at a place wins
        start = k.lead(m.start())
        if k.subject.startswith("since", start):  # "since May": from then up to the end of ref's day
            span = TimeSpan(span.start, max(span.end, k.at(k.day + timedelta(days=1))))
        found.append(Mention(start, m.end(), text[start:m.end()], span))
        if len(found) == MAX_MENTIONS:
            break
    return found


def resolve(text: str, ref: datetime) -> TimeSpan | None:
    """The span the first time expression of ``text`` names, read against ``ref``; None if there is none.

    >>> resolve("昨天下雨了", datetime(2023, 5, 8, 9, tzinfo=UTC)).start
    datetime.datetime(2023, 5, 7, 0, 0, tzinfo=datetime.timezone.utc)
    """
    found = mentions(text, ref)
    return found[0].span if found else None


def query_window(query: str, now: datetime) -> QueryTime | None:
    """The time a recall query asks about (all its expressions joined) and the query without them."""
    found = mentions(query, now)
    if not found:
        return None
    parts, at = [], 0
    for f in found:
        parts.append(query[at:f.start])
        at = f.end
    parts.append(query[at:])
    rest = " ".join(" ".join(parts).split())
    for mark in "?？!！,，.。":
        rest = rest.replace(" " + mark, mark)
    span = TimeSpan(min(f.span.start for f in found), max(f.span.end for f in found))
    return QueryTime(span, rest.strip(" ,，"))

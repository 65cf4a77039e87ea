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
  "going to", "plan", 要, 打算, 准备, 计划…): then the next one not before ref. "last May" is the May
  before ref's month, "next May" the one after, "this May" the one of ref's year;
* a bare month name needs a preposition or modifier ("in May", "last March"): "I may go" is no date;
  a bare year needs one too ("in 2023", 2023年); bare weekdays ("on Friday", 周五) are left alone,
  their direction unknown;
* parts of the day: morning 06–12, noon 11–14, afternoon 12–18, evening 18–24, night 18–06 of the
  next day (so "last night" ends at 06:00 of ref's day), 凌晨 00–06.

Every pattern's repetitions are bounded, so the scan is linear in the text: a megabyte parses in
well under a second.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo

__all__ = ["Mention", "QueryTime", "TimeSpan", "mentions", "query_window", "resolve"]

MAX_MENTIONS = 100  # a text naming more times than this is not about one of them


@dataclass(frozen=True)
class TimeSpan:
    """``[start, end)``, both timezone-aware."""

    start: datetime
    end: datetime

    def __contains__(self, t: datetime) -> bool:
        return self.start <= t < self.end


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
    k = _Context(text if isinstance(text, str) else "", ref)
    hits = sorted((hit for r in _SCANS for hit in r.scan(k)), key=lambda h: (h[0].start(), -h[0].end()))
    found: list[Mention] = []
    for m, span in hits:
        if found and m.start() < found[-1].end:
            continue  # inside or across the one before ("2023" of "2023年5月"); the longest at a place wins
        start = k.lead(m.start())
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


_FUTURE = re.compile(r"(?<![a-z])(?:will|going\s{1,3}to|gonna|plan|plans|planning|planned|upcoming|intend)(?![a-z])"
                     r"|'ll(?![a-z])|要|将|打算|准备|计划|预计")


_LEAD = re.compile(r"(?<![a-z])(in|on|during|at|since|from|of|by|until|through|early|mid|late|the)\s{1,3}$")
LEADS = 2  # "on the 7th of May": words before an expression that belong to it


class _Context:
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

    def pre(self, m: re.Match[str]) -> str | None:
        """The preposition or article just before the match ("in" May, "the" other day)."""
        found = _LEAD.search(self.subject, max(0, m.start() - 16), m.start()) if m.start() else None
        return found.group(1) if found else None

    def bounded(self, m: re.Match[str], before: str) -> bool:
        """The match does not continue a word or number: the character before it is not in ``before``."""
        return m.start() == 0 or self.subject[m.start() - 1] not in before

    def lead(self, start: int) -> int:
        """Where the expression starts once the words that lead into it are counted."""
        for _ in range(LEADS):
            found = _LEAD.search(self.subject, max(0, start - 16), start) if start else None
            if found is None:
                break
            start = found.start()
        return start

    def future(self, m: re.Match[str]) -> bool:
        """A future word near the match: an undated month or day then means the next one."""
        return _FUTURE.search(self.subject, max(0, m.start() - 40), m.end() + 40) is not None

    def at(self, d: date, hours: int = 0) -> datetime:
        return datetime(d.year, d.month, d.day, tzinfo=self.tz) + timedelta(hours=hours)

    def days(self, first: date, count: int = 1) -> TimeSpan:
        return TimeSpan(self.at(first), self.at(first + timedelta(days=count)))

    def week(self, d: date, offset: int = 0) -> TimeSpan:
        return self.days(_monday(d) + timedelta(weeks=offset), 7)

    def month(self, year: int, month: int) -> TimeSpan:
        y, m = _shift(year, month, 0)
        ny, nm = _shift(year, month, 1)
        return TimeSpan(self.at(date(y, m, 1)), self.at(date(ny, nm, 1)))

    def year(self, year: int) -> TimeSpan:
        return TimeSpan(self.at(date(year, 1, 1)), self.at(date(year + 1, 1, 1)))

    def part(self, d: date, part: str) -> TimeSpan:
        start, end = _PARTS[part]
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
            return TimeSpan(self.month(*_shift(self.day.year, self.day.month, -n)).start,
                            self.month(*_shift(self.day.year, self.day.month, -near)).end)
        return TimeSpan(self.year(self.day.year - n).start, self.year(self.day.year - near).end)


def _monday(d: date) -> date:
    return d - timedelta(days=d.weekday())


def _shift(year: int, month: int, months: int) -> tuple[int, int]:
    y, m = divmod(year * 12 + month - 1 + months, 12)
    return y, m + 1


_PARTS = {"morning": (6, 12), "noon": (11, 14), "afternoon": (12, 18), "evening": (18, 24), "night": (18, 30),
          "dawn": (0, 6)}

# --- vocabulary ------------------------------------------------------------------------------------

_MONTHS = {name: i + 1 for i, names in enumerate([
    "january jan", "february feb", "march mar", "april apr", "may", "june jun", "july jul", "august aug",
    "september sept sep", "october oct", "november nov", "december dec"]) for name in names.split()}
_WEEKDAYS = {name: i for i, name in enumerate(  # no "sat", "sun": "when I last sat down"
    "monday tuesday wednesday thursday friday saturday sunday".split())}
_NUMBERS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}
_NUMBERS.update({"a": 1, "an": 1, "a couple of": 2, "couple of": 2, "a couple": 2})
_VAGUE = ("a few", "few", "several", "some", "几")
_CN_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 7,
                "1": 0, "2": 1, "3": 2, "4": 3, "5": 4, "6": 5, "7": 6}
_CN_UNITS = {"天": "day", "日": "day", "周": "week", "星期": "week", "礼拜": "week", "月": "month", "年": "year"}
_CN_PARTS = {"早上": "morning", "早晨": "morning", "上午": "morning", "中午": "noon", "下午": "afternoon",
             "傍晚": "evening", "晚上": "evening", "夜里": "night", "夜间": "night", "凌晨": "dawn"}


def _alt(words: object) -> str:
    return "|".join(sorted((re.escape(w).replace(r"\ ", r"\s{1,3}") for w in words), key=len, reverse=True))


def _number(text: str) -> int:
    """``12``, ``twelve``, ``十二``, ``两``, ``二十一``…"""
    t = " ".join(text.lower().split())
    if t.isdigit():
        return int(t)
    if t in _NUMBERS:
        return _NUMBERS[t]
    if "十" in t:
        tens, _, ones = t.partition("十")
        return (_CN_DIGITS[tens] if tens else 1) * 10 + (_CN_DIGITS[ones] if ones else 0)
    return _CN_DIGITS[t]


# --- rules ----------------------------------------------------------------------------------------
# Each rule is its own pattern, scanned over the whole text. Every pattern begins with a literal or a
# character class, so the regex engine skips in C to the places it can start; every repetition is
# bounded ({1,3}, never +), so no input makes a scan quadratic. Word edges are checked by the rule
# (``bounded``): a leading look-behind would cost the skip.

LETTERS, DIGITS, CN_DIGITS = "abcdefghijklmnopqrstuvwxyz", "0123456789", "0123456789一二两三四五六七八九十"
S = r"\s{1,3}+"  # possessive: what was matched is never re-tried, so a failing place fails at once
END = r"(?![a-z])"
MONTH = rf"(?:{_alt(_MONTHS)})\.?"
NUM_WORDS = _alt([*_NUMBERS, *_VAGUE[:-1]])
UNIT = r"(?P<unit>day|week|month|year)s?"
DIRECTION = rf"{S}(?P<dir>ago|before|earlier|back|later|from{S}now|hence){END}"
CN_NUM = "[0-9一二两三四五六七八九十几][0-9一二两三四五六七八九十]{0,3}+"
CN_SMALL = "[0-9一二三四五六七八九十]{1,3}+"
CN_S = r"\s{0,2}+"
CN_PART = "(?P<part>早上|早晨|上午|中午|下午|傍晚|晚上|夜里|夜间|凌晨)"

Handler = Callable[[re.Match[str], _Context], "TimeSpan | None"]


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    handle: Handler
    before: str  # characters that must not come right before a match (it would be inside a word)
    script: re.Pattern[str] | None  # every match has one of these characters: no need to scan a text without

    def scan(self, k: _Context) -> Iterator[tuple[re.Match[str], TimeSpan]]:
        if self.script is not None and not k.has(self.script):
            return
        at, count = 0, 0
        while count < MAX_MENTIONS and (m := self.pattern.search(k.subject, at)):
            try:
                span = self.handle(m, k) if k.bounded(m, self.before) else None
            except (ValueError, OverflowError, KeyError):  # Feb 30, year 0, 一二三 as a number
                span = None
            if span is None:  # not a time after all ("I may go"): look again one character on
                at = m.start() + 1
                continue
            yield m, span
            at, count = m.end(), count + 1


_SCANS: list[_Rule] = []


LATIN, HAN = re.compile("[a-z]"), re.compile("[\u4e00-\u9fff]")


def rule(pattern: str, before: str = "", script: re.Pattern[str] | None = LATIN) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        _SCANS.append(_Rule(re.compile(pattern), fn, before, script))
        return fn
    return register


@rule(r"[0-9][0-9]{3}(?P<sep>[-/.])(?P<m>[0-9]{1,2})(?P=sep)(?P<d>[0-9]{1,2})(?![0-9])", DIGITS, None)
def _iso(m: re.Match[str], k: _Context) -> TimeSpan:
    return k.days(date(int(m.group()[:4]), int(m["m"]), int(m["d"])))


@rule(rf"(?P<d>[0-9][0-9]?+)(?:st|nd|rd|th)?+{S}(?:of{S})?(?P<m>{MONTH})(?:,?{S}(?P<y>[0-9]{{4}}))?(?![a-z0-9])",
      DIGITS + LETTERS)
def _day_month(m: re.Match[str], k: _Context) -> TimeSpan | None:
    month, day = _MONTHS[m["m"].rstrip(".")], int(m["d"])
    return k.days(date(int(m["y"]), month, day)) if m["y"] else k.undated(m, month, day)


@rule(rf"(?P<m>{MONTH})(?:{S}(?:the{S})?(?P<d>[0-9][0-9]?+)(?:st|nd|rd|th)?+(?![a-z0-9])(?:,?{S}(?P<y>[0-9]{{4}}))?"
      rf"|,?{S}(?P<y2>[0-9]{{4}}))(?![a-z0-9])", LETTERS)
def _month_name(m: re.Match[str], k: _Context) -> TimeSpan | None:
    month = _MONTHS[m["m"].rstrip(".")]
    if m["y2"]:
        return k.month(int(m["y2"]), month)
    return k.days(date(int(m["y"]), month, int(m["d"]))) if m["y"] else k.undated(m, month, int(m["d"]))


# A bare month name needs a word before it: "I may go" is no date. Not when a day or year follows:
# "in May 7" is read by the rule above.
@rule(rf"(?:in|during|since|until|by|early|mid|late|of|through){S}(?P<m>{MONTH})(?![a-z0-9])(?!\.?,?\s{{0,3}}[0-9])",
      LETTERS)
def _in_month(m: re.Match[str], k: _Context) -> TimeSpan | None:
    return k.undated(m, _MONTHS[m["m"].rstrip(".")], None)


def _ago(m: re.Match[str], k: _Context) -> TimeSpan | None:
    """"3 days ago", "a few weeks back", "two days later", "in 3 days" ("for 3 days" is a length, not a time)."""
    direction = " ".join((m.groupdict().get("dir") or "").split())
    n = " ".join(m["n"].split())
    sign = 1 if direction in ("ago", "before", "earlier", "back") else -1
    unit = m["unit"]
    if n in _VAGUE:
        return k.ago(5, unit, 2) if sign > 0 else k.ago(-2, unit, -5)
    return k.ago(sign * _number(n), unit)


rule(rf"(?P<n>[0-9][0-9]{{0,2}}+){S}{UNIT}{DIRECTION}", DIGITS + LETTERS)(_ago)
rule(rf"(?P<n>{NUM_WORDS}){S}{UNIT}{DIRECTION}", LETTERS)(_ago)
rule(rf"in{S}(?P<n>[0-9][0-9]{{0,2}}+|{NUM_WORDS}){S}{UNIT}{END}", LETTERS)(_ago)


@rule(rf"(?P<w>yesterday|today|tonight|tomorrow|day{S}before{S}yesterday|day{S}after{S}tomorrow)"
      rf"(?:{S}(?P<part>morning|afternoon|evening|night))?{END}", LETTERS)
def _day(m: re.Match[str], k: _Context) -> TimeSpan:
    word = m["w"].split()[-1] if m["w"].startswith("day") else m["w"]
    offset = {"yesterday": -1, "tomorrow": 1}.get(word, 0) * (2 if m["w"].startswith("day") else 1)
    part = "night" if word == "tonight" else m["part"]
    d = k.day + timedelta(days=offset)
    return k.part(d, part) if part else k.days(d)


@rule(rf"the{S}other{S}day{END}", LETTERS)
def _other_day(m: re.Match[str], k: _Context) -> TimeSpan:
    return k.ago(7, "day", 1)


@rule(rf"(?P<mod>this{S}past|this|last|next|past|coming|previous){S}"
      rf"(?P<u>weekend|week|month|year|night|morning|afternoon|evening|{_alt(_WEEKDAYS)}|{MONTH}){END}", LETTERS)
def _relative(m: re.Match[str], k: _Context) -> TimeSpan | None:
    mod, unit = " ".join(m["mod"].split()), m["u"].rstrip(".")
    if mod == "this" and k.text[m.start("u"):m.end("u")] == "may":
        return None  # "this may help": a verb, unless written as a name
    if mod in ("this past", "past", "previous"):
        mod = "past" if unit in ("week", "month", "year") and mod != "previous" else "last"
    step = {"last": -1, "this": 0, "next": 1, "coming": 1, "past": 0}[mod]
    if unit in _PARTS:
        if mod == "this":
            return k.part(k.day, unit)
        return k.part(k.day - timedelta(days=1), unit) if mod == "last" and unit in ("night", "evening") else None
    if unit == "weekend":
        return k.days(_monday(k.day) + timedelta(days=5 + 7 * step), 2)
    if mod == "past":  # a rolling window ending today
        back = {"week": k.day - timedelta(days=6), "month": _months_back(k.day, 1), "year": _months_back(k.day, 12)}
        return TimeSpan(k.at(back[unit]), k.at(k.day + timedelta(days=1)))
    if unit == "week":
        return k.week(k.day, step)
    if unit == "month":
        return k.month(*_shift(k.day.year, k.day.month, step))
    if unit == "year":
        return k.year(k.day.year + step)
    if unit in _WEEKDAYS:
        wd, today = _WEEKDAYS[unit], k.day.weekday()
        if step == 0:
            return k.days(_monday(k.day) + timedelta(days=wd))
        back = (today - wd - 1) % 7 + 1 if step < 0 else -((wd - today - 1) % 7 + 1)
        return k.days(k.day - timedelta(days=back))
    month = _MONTHS[unit]
    if step < 0:
        return k.month(k.day.year - (month >= k.day.month), month)
    return k.month(k.day.year + (step > 0 and month <= k.day.month), month)


@rule(rf"(?:in|during|since|of){S}(?P<y>(?:1[89]|2[01])[0-9][0-9])(?![0-9a-z年])(?![-/.][0-9])", LETTERS)
def _year(m: re.Match[str], k: _Context) -> TimeSpan:
    return k.year(int(m["y"]))  # a bare number is not taken for a year


def _months_back(d: date, months: int) -> date:
    y, m = _shift(d.year, d.month, -months)
    for day in (d.day, 30, 29, 28):
        try:
            return date(y, m, day)
        except ValueError:
            continue
    raise ValueError(d)


# Chinese

@rule(rf"(?P<n>{CN_NUM}){CN_S}(?:(?P<ago>(?:个{CN_S})?(?:天|日|周|星期|礼拜|年)|个{CN_S}月)"
      rf"{CN_S}(?P<dir>以前|之前|以后|之后|前|后)|(?P<year>年)(?:{CN_S}(?P<ym>{CN_SMALL}){CN_S}月份?"
      rf"(?:{CN_S}(?P<yd>{CN_SMALL}){CN_S}[日号])?)?|月份?(?:{CN_S}(?P<d>{CN_SMALL}){CN_S}[日号])?)",
      CN_DIGITS, HAN)
def _cn_number(m: re.Match[str], k: _Context) -> TimeSpan | None:
    n = m["n"]
    if m["ago"]:  # 三天前, 两周后, 三个月前 (三月前 is "before March")
        unit = _CN_UNITS[m["ago"][-2:] if m["ago"].endswith(("星期", "礼拜")) else m["ago"][-1]]
        sign = 1 if m["dir"].endswith("前") else -1
        if n == "几":
            return k.ago(5, unit, 2) if sign > 0 else k.ago(-2, unit, -5)
        return k.ago(sign * _number(n), unit) if len(n) <= 3 else None
    if m["year"]:  # 2023年, 2023年5月, 2023年5月7日
        if len(n) != 4 or not n.isdigit():
            return None
        if not m["ym"]:
            return k.year(int(n))
        return k.days(date(int(n), _number(m["ym"]), _number(m["yd"]))) if m["yd"] else \
            k.month(int(n), _number(m["ym"]))
    month = _number(n)  # 五月, 5月7日
    if not 1 <= month <= 12:
        return None
    return k.undated(m, month, _number(m["d"]) if m["d"] else None)


@rule(rf"(?P<w>大前天|大后天|前天|昨天|昨日|今天|今日|明天|明日|后天|去年|今年|明年|前年|后年|昨晚|昨夜|今晚|今夜|今早|明早|明晚)"
      rf"(?:{CN_PART}|{CN_S}(?P<m>{CN_SMALL}){CN_S}月份?(?:{CN_S}(?P<d>{CN_SMALL}){CN_S}[日号])?)?", "", HAN)
def _cn_word(m: re.Match[str], k: _Context) -> TimeSpan | None:
    w = m["w"]
    if w.endswith("年"):  # 去年, 去年五月, 去年5月7日
        year = k.day.year + {"前年": -2, "去年": -1, "今年": 0, "明年": 1, "后年": 2}[w]
        if m["part"]:
            return None
        if not m["m"]:
            return k.year(year)
        return k.days(date(year, _number(m["m"]), _number(m["d"]))) if m["d"] else k.month(year, _number(m["m"]))
    if m["m"]:
        return None  # 今天5月…: the day word alone is read by a later scan
    if len(w) == 2 and w[1] in "晚夜早":  # 昨晚, 今早
        return k.part(k.day + timedelta(days={"昨": -1, "今": 0, "明": 1}[w[0]]), "morning" if w[1] == "早" else "night")
    offset = {"大前天": -3, "前天": -2, "昨天": -1, "昨日": -1, "今天": 0, "今日": 0, "明天": 1, "明日": 1,
              "后天": 2, "大后天": 3}[w]
    d = k.day + timedelta(days=offset)
    return k.part(d, _CN_PARTS[m["part"]]) if m["part"] else k.days(d)


@rule(r"(?P<mod>上上|下下|上|下|这|本)\s{0,2}+个?+\s{0,2}+(?:(?P<week>周|星期|礼拜)(?P<d>[一二三四五六日天末1-7])?|月(?!份))", "", HAN)
def _cn_relative(m: re.Match[str], k: _Context) -> TimeSpan:
    step = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2}[m["mod"]]
    if not m["week"]:  # 上个月, 下个月, 这个月
        return k.month(*_shift(k.day.year, k.day.month, step))
    monday = _monday(k.day) + timedelta(weeks=step)
    if not m["d"]:
        return k.days(monday, 7)
    wd = _CN_WEEKDAYS[m["d"]]
    return k.days(monday + timedelta(days=5), 2) if wd == 7 else k.days(monday + timedelta(days=wd))


@rule(r"前几天|这几天|最近几天", "", HAN)
def _cn_few_days(m: re.Match[str], k: _Context) -> TimeSpan:
    return k.ago(5, "day", 2) if m.group() == "前几天" else k.ago(4, "day", 0)

"""English time expressions: "yesterday", "last Friday", "3 weeks ago", "in May", "7 May 2023", "2023-05-07"."""

from __future__ import annotations

import re
from datetime import date, timedelta

from hermes_hub.services.memory.timeparse.reading import PARTS, Reading, TimeSpan, monday, months_back, shift
from hermes_hub.services.memory.timeparse.rules import DIGITS, END, LETTERS, NUMBERS, VAGUE, S, alt, number, rule

MONTHS = {name: i + 1 for i, names in enumerate([
    "january jan", "february feb", "march mar", "april apr", "may", "june jun", "july jul", "august aug",
    "september sept sep", "october oct", "november nov", "december dec"]) for name in names.split()}
WEEKDAYS = {name: i for i, name in enumerate(  # no "sat", "sun": "when I last sat down"
    "monday tuesday wednesday thursday friday saturday sunday".split())}
MONTH = rf"(?:{alt(MONTHS)})\.?"
NUM_WORDS = alt([*NUMBERS, *VAGUE[:-1]])
UNIT = r"(?P<unit>day|week|month|year)s?"
DIRECTION = rf"{S}(?P<dir>ago|before|earlier|back|later|from{S}now|hence){END}"


@rule(r"[0-9][0-9]{3}(?P<sep>[-/.])(?P<m>[0-9]{1,2})(?P=sep)(?P<d>[0-9]{1,2})(?![0-9])", DIGITS, None)
def _iso(m: re.Match[str], k: Reading) -> TimeSpan:
    return k.days(date(int(m.group()[:4]), int(m["m"]), int(m["d"])))


@rule(rf"(?P<d>[0-9][0-9]?+)(?:st|nd|rd|th)?+{S}(?:of{S})?(?P<m>{MONTH})(?:,?{S}(?P<y>[0-9]{{4}}))?(?![a-z0-9])",
      DIGITS + LETTERS)
def _day_month(m: re.Match[str], k: Reading) -> TimeSpan | None:
    month, day = MONTHS[m["m"].rstrip(".")], int(m["d"])
    return k.days(date(int(m["y"]), month, day)) if m["y"] else k.undated(m, month, day)


@rule(rf"(?P<m>{MONTH})(?:{S}(?:the{S})?(?P<d>[0-9][0-9]?+)(?:st|nd|rd|th)?+(?![a-z0-9])(?:,?{S}(?P<y>[0-9]{{4}}))?"
      rf"|,?{S}(?P<y2>[0-9]{{4}}))(?![a-z0-9])", LETTERS)
def _month_name(m: re.Match[str], k: Reading) -> TimeSpan | None:
    month = MONTHS[m["m"].rstrip(".")]
    if m["y2"]:
        return k.month(int(m["y2"]), month)
    return k.days(date(int(m["y"]), month, int(m["d"]))) if m["y"] else k.undated(m, month, int(m["d"]))


# A bare month name needs a word before it: "I may go" is no date. Not when a day or year follows:
# "in May 7" is read by the rule above.
@rule(rf"(?:in|during|since|until|by|early|mid|late|of|through){S}(?P<m>{MONTH})(?![a-z0-9])(?!\.?,?\s{{0,3}}[0-9])",
      LETTERS)
def _in_month(m: re.Match[str], k: Reading) -> TimeSpan | None:
    return k.undated(m, MONTHS[m["m"].rstrip(".")], None)


def _ago(m: re.Match[str], k: Reading) -> TimeSpan | None:
    """"3 days ago", "a few weeks back", "two days later", "in 3 days" ("for 3 days" is a length, not a time)."""
    direction = " ".join((m.groupdict().get("dir") or "").split())
    n = " ".join(m["n"].split())
    sign = 1 if direction in ("ago", "before", "earlier", "back") else -1
    unit = m["unit"]
    if n in VAGUE:
        return k.ago(5, unit, 2) if sign > 0 else k.ago(-2, unit, -5)
    return k.ago(sign * number(n), unit)


rule(rf"(?P<n>[0-9][0-9]{{0,2}}+){S}{UNIT}{DIRECTION}", DIGITS + LETTERS)(_ago)
rule(rf"(?P<n>{NUM_WORDS}){S}{UNIT}{DIRECTION}", LETTERS)(_ago)
rule(rf"in{S}(?P<n>[0-9][0-9]{{0,2}}+|{NUM_WORDS}){S}{UNIT}{END}", LETTERS)(_ago)


@rule(rf"(?P<w>yesterday|today|tonight|tomorrow|day{S}before{S}yesterday|day{S}after{S}tomorrow)"
      rf"(?:{S}(?P<part>morning|afternoon|evening|night))?{END}", LETTERS)
def _day(m: re.Match[str], k: Reading) -> TimeSpan:
    word = m["w"].split()[-1] if m["w"].startswith("day") else m["w"]
    offset = {"yesterday": -1, "tomorrow": 1}.get(word, 0) * (2 if m["w"].startswith("day") else 1)
    part = "night" if word == "tonight" else m["part"]
    d = k.day + timedelta(days=offset)
    return k.part(d, part) if part else k.days(d)


@rule(rf"the{S}other{S}day{END}", LETTERS)
def _other_day(m: re.Match[str], k: Reading) -> TimeSpan:
    return k.ago(7, "day", 1)


@rule(rf"(?P<mod>this{S}past|this|last|next|past|coming|previous){S}"
      rf"(?P<u>weekend|week|month|year|night|morning|afternoon|evening|{alt(WEEKDAYS)}|{MONTH}){END}", LETTERS)
def _relative(m: re.Match[str], k: Reading) -> TimeSpan | None:
    mod, unit = " ".join(m["mod"].split()), m["u"].rstrip(".")
    if mod == "this" and k.text[m.start("u"):m.end("u")] == "may":
        return None  # "this may help": a verb, unless written as a name
    if mod in ("this past", "past", "previous"):
        mod = "past" if unit in ("week", "month", "year") and mod != "previous" else "last"
    step = {"last": -1, "this": 0, "next": 1, "coming": 1, "past": 0}[mod]
    if unit in PARTS:
        if mod == "this":
            return k.part(k.day, unit)
        return k.part(k.day - timedelta(days=1), unit) if mod == "last" and unit in ("night", "evening") else None
    if unit == "weekend":
        return k.days(monday(k.day) + timedelta(days=5 + 7 * step), 2)
    if mod == "past":  # a rolling window ending today
        back = {"week": k.day - timedelta(days=6), "month": months_back(k.day, 1), "year": months_back(k.day, 12)}
        return TimeSpan(k.at(back[unit]), k.at(k.day + timedelta(days=1)))
    if unit == "week":
        return k.week(k.day, step)
    if unit == "month":
        return k.month(*shift(k.day.year, k.day.month, step))
    if unit == "year":
        return k.year(k.day.year + step)
    if unit in WEEKDAYS:
        wd, today = WEEKDAYS[unit], k.day.weekday()
        if step == 0:
            return k.days(monday(k.day) + timedelta(days=wd))
        back = (today - wd - 1) % 7 + 1 if step < 0 else -((wd - today - 1) % 7 + 1)
        return k.days(k.day - timedelta(days=back))
    month = MONTHS[unit]
    if step < 0:
        return k.month(k.day.year - (month >= k.day.month), month)
    return k.month(k.day.year + (step > 0 and month <= k.day.month), month)


@rule(rf"(?:in|during|since|of){S}(?P<y>(?:1[89]|2[01])[0-9][0-9])(?![0-9a-z年])(?![-/.][0-9])", LETTERS)
def _year(m: re.Match[str], k: Reading) -> TimeSpan:
    return k.year(int(m["y"]))  # a bare number is not taken for a year

"""Time expressions in English and Chinese resolve to the span they name, against fixed reference times."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta, timezone

import pytest

from hermes_hub.services.memory.timeparse import QueryTime, TimeSpan, mentions, query_window, resolve

MON = datetime(2023, 5, 8, 15, 0, tzinfo=UTC)  # a Monday; its week is May 8-14
SUN = datetime(2023, 5, 7, 21, 30, tzinfo=UTC)  # a Sunday, the last day of the week May 1-7
NEW_YEAR = datetime(2023, 1, 1, 9, 0, tzinfo=UTC)  # a Sunday and the first day of a month and a year
LEAP = datetime(2024, 3, 1, 8, 0, tzinfo=UTC)  # the day after Feb 29 (a Friday)
NO_LEAP = datetime(2023, 3, 1, 8, 0, tzinfo=UTC)


def at(text: str) -> datetime:
    """'2023-05-07' or '2023-05-07T18' in UTC."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def span(start: str, end: str) -> TimeSpan:
    return TimeSpan(at(start), at(end))


def day(d: str) -> TimeSpan:
    return TimeSpan(at(d), at(d) + timedelta(days=1))


ENGLISH = [  # (text, reference, expected span)
    ("yesterday", MON, day("2023-05-07")),
    ("today", MON, day("2023-05-08")),
    ("tomorrow", MON, day("2023-05-09")),
    ("We had pizza last night", MON, span("2023-05-07T18", "2023-05-08T06")),
    ("this morning I ran", MON, span("2023-05-08T06", "2023-05-08T12")),
    ("yesterday afternoon", MON, span("2023-05-07T12", "2023-05-07T18")),
    ("tonight", MON, span("2023-05-08T18", "2023-05-09T06")),
    ("two days ago", MON, day("2023-05-06")),
    ("the day before yesterday", MON, day("2023-05-06")),
    ("3 weeks ago", MON, span("2023-04-17", "2023-04-24")),  # the week holding May 8 - 21 days
    ("a week ago", MON, span("2023-05-01", "2023-05-08")),
    ("last week", MON, span("2023-05-01", "2023-05-08")),
    ("this week", MON, span("2023-05-08", "2023-05-15")),
    ("next week", MON, span("2023-05-15", "2023-05-22")),
    ("next Friday", MON, day("2023-05-12")),  # the first Friday after the day
    ("last Friday", MON, day("2023-05-05")),
    ("this weekend", MON, span("2023-05-13", "2023-05-15")),
    ("last weekend", MON, span("2023-05-06", "2023-05-08")),
    ("this past weekend", MON, span("2023-05-06", "2023-05-08")),
    ("next month", MON, span("2023-06-01", "2023-07-01")),
    ("last month", MON, span("2023-04-01", "2023-05-01")),
    ("2 months ago", MON, span("2023-03-01", "2023-04-01")),
    ("in May", MON, span("2023-05-01", "2023-06-01")),  # the month under way
    ("in June", MON, span("2022-06-01", "2022-07-01")),  # no future word: the last June
    ("I will fly to Oslo in June", MON, span("2023-06-01", "2023-07-01")),  # a future word: the next June
    ("we're going to meet in early March", MON, span("2024-03-01", "2024-04-01")),
    ("last May", MON, span("2022-05-01", "2022-06-01")),
    ("next May", MON, span("2024-05-01", "2024-06-01")),
    ("This May was rainy", MON, span("2023-05-01", "2023-06-01")),
    ("May 7", MON, day("2023-05-07")),
    ("May 9", MON, day("2022-05-09")),  # not after the reference day
    ("the party will be on May 9", MON, day("2023-05-09")),
    ("on the 7th of May", MON, day("2023-05-07")),
    ("7 May 2023", MON, day("2023-05-07")),
    ("May 7th, 2022", MON, day("2022-05-07")),
    ("Dec. 25", MON, day("2022-12-25")),
    ("May 2021", MON, span("2021-05-01", "2021-06-01")),
    ("2023-05-07", MON, day("2023-05-07")),
    ("2023/05/07", MON, day("2023-05-07")),
    ("in 2021", MON, span("2021-01-01", "2022-01-01")),
    ("since March", MON, span("2023-03-01", "2023-05-09")),  # up to the end of the day
    ("ever since 2021", MON, span("2021-01-01", "2023-05-09")),
    ("last year", MON, span("2022-01-01", "2023-01-01")),
    ("next year", MON, span("2024-01-01", "2025-01-01")),
    ("a few days ago", MON, span("2023-05-03", "2023-05-07")),  # 5 to 2 days before
    ("several weeks ago", MON, span("2023-04-03", "2023-05-01")),
    ("a couple of days ago", MON, day("2023-05-06")),
    ("the other day", MON, span("2023-05-01", "2023-05-08")),
    ("in 3 days", MON, day("2023-05-11")),
    ("two days later", MON, day("2023-05-10")),
    ("in two weeks", MON, span("2023-05-22", "2023-05-29")),
    ("WHAT HAPPENED YESTERDAY", MON, day("2023-05-07")),
    # Sundays end the week
    ("last Sunday", SUN, day("2023-04-30")),
    ("this Sunday", SUN, day("2023-05-07")),
    ("next Sunday", SUN, day("2023-05-14")),
    ("next Monday", SUN, day("2023-05-08")),
    ("last Monday", SUN, day("2023-05-01")),
    ("this weekend", SUN, span("2023-05-06", "2023-05-08")),  # the weekend under way
    ("last week", SUN, span("2023-04-24", "2023-05-01")),
    ("a week ago", SUN, span("2023-04-24", "2023-05-01")),
    # month and year boundaries
    ("yesterday", NEW_YEAR, day("2022-12-31")),
    ("last month", NEW_YEAR, span("2022-12-01", "2023-01-01")),
    ("last week", NEW_YEAR, span("2022-12-19", "2022-12-26")),
    ("this week", NEW_YEAR, span("2022-12-26", "2023-01-02")),
    ("3 months ago", NEW_YEAR, span("2022-10-01", "2022-11-01")),
    ("in December", NEW_YEAR, span("2022-12-01", "2023-01-01")),
    ("last December", NEW_YEAR, span("2022-12-01", "2023-01-01")),
    ("next January", NEW_YEAR, span("2024-01-01", "2024-02-01")),
    ("this past month", NEW_YEAR, span("2022-12-01", "2023-01-02")),
    # leap years
    ("yesterday", LEAP, day("2024-02-29")),
    ("Feb 29", LEAP, day("2024-02-29")),
    ("Feb 29", NO_LEAP, day("2020-02-29")),  # the last Feb 29 there was
    ("a year ago", LEAP, span("2023-01-01", "2024-01-01")),
    ("the past month", datetime(2024, 3, 31, tzinfo=UTC), span("2024-02-29", "2024-04-01")),
]

CHINESE = [
    ("昨天下雨了", MON, day("2023-05-07")),
    ("今天", MON, day("2023-05-08")),
    ("前天", MON, day("2023-05-06")),
    ("大前天", MON, day("2023-05-05")),
    ("明天我们去北京开会", MON, day("2023-05-09")),
    ("后天", MON, day("2023-05-10")),
    ("昨晚", MON, span("2023-05-07T18", "2023-05-08T06")),
    ("今天早上", MON, span("2023-05-08T06", "2023-05-08T12")),
    ("昨天下午", MON, span("2023-05-07T12", "2023-05-07T18")),
    ("上周五", MON, day("2023-05-05")),
    ("上个星期五", MON, day("2023-05-05")),
    ("下周一", MON, day("2023-05-15")),
    ("这周三", MON, day("2023-05-10")),
    ("上周", MON, span("2023-05-01", "2023-05-08")),
    ("这周", MON, span("2023-05-08", "2023-05-15")),
    ("本周", MON, span("2023-05-08", "2023-05-15")),
    ("上上周", MON, span("2023-04-24", "2023-05-01")),
    ("这周末", MON, span("2023-05-13", "2023-05-15")),
    ("上个月", MON, span("2023-04-01", "2023-05-01")),
    ("下个月", MON, span("2023-06-01", "2023-07-01")),
    ("这个月", MON, span("2023-05-01", "2023-06-01")),
    ("去年", MON, span("2022-01-01", "2023-01-01")),
    ("今年", MON, span("2023-01-01", "2024-01-01")),
    ("前年", MON, span("2021-01-01", "2022-01-01")),
    ("五月", MON, span("2023-05-01", "2023-06-01")),
    ("十二月", MON, span("2022-12-01", "2023-01-01")),
    ("我打算八月去北京", MON, span("2023-08-01", "2023-09-01")),  # 打算: the next August
    ("八月去了北京", MON, span("2022-08-01", "2022-09-01")),
    ("去年五月", MON, span("2022-05-01", "2022-06-01")),
    ("5月7日", MON, day("2023-05-07")),
    ("5月7号", MON, day("2023-05-07")),
    ("五月七日", MON, day("2023-05-07")),
    ("2023年5月7日", MON, day("2023-05-07")),
    ("2022年", MON, span("2022-01-01", "2023-01-01")),
    ("2022年12月", MON, span("2022-12-01", "2023-01-01")),
    ("三天前", MON, day("2023-05-05")),
    ("3天后", MON, day("2023-05-11")),
    ("两周前", MON, span("2023-04-24", "2023-05-01")),
    ("一个星期前", MON, span("2023-05-01", "2023-05-08")),
    ("三个月前", MON, span("2023-02-01", "2023-03-01")),
    ("三月前", MON, span("2023-03-01", "2023-04-01")),  # "before March", not three months ago
    ("两年前", MON, span("2021-01-01", "2022-01-01")),
    ("几天前", MON, span("2023-05-03", "2023-05-07")),
    ("前几天", MON, span("2023-05-03", "2023-05-07")),
    # Sundays end the week
    ("上周日", SUN, day("2023-04-30")),
    ("这周日", SUN, day("2023-05-07")),
    ("星期天", SUN, None),  # a bare weekday: which one is unknown
    ("下周一", SUN, day("2023-05-08")),
    ("上周", SUN, span("2023-04-24", "2023-05-01")),
    ("这周", SUN, span("2023-05-01", "2023-05-08")),
    # boundaries and leap years
    ("昨天", NEW_YEAR, day("2022-12-31")),
    ("上个月", NEW_YEAR, span("2022-12-01", "2023-01-01")),
    ("去年", NEW_YEAR, span("2022-01-01", "2023-01-01")),
    ("上周五", NEW_YEAR, day("2022-12-23")),
    ("昨天", LEAP, day("2024-02-29")),
    ("2月29日", LEAP, day("2024-02-29")),
    ("2月29日", NO_LEAP, day("2020-02-29")),
]

NOTHING = [
    "", "I prefer charts to tables", "我喜欢图表", "I may go to the mayor's office", "this may help",
    "we talked for 3 days", "on Friday", "周五见", "2023 was great", "version 1.2.3", "十三月", "2月30日",
    "Feb 30", "dismay in Monday's news", "someday", "call 555-1234", "in 99999 days",
]


@pytest.mark.parametrize("text, ref, expected", ENGLISH + CHINESE, ids=[f"{t}@{r:%a %Y-%m-%d}" for t, r, _ in
                                                                         ENGLISH + CHINESE])
def test_an_expression_resolves_to_the_span_it_names(text, ref, expected):
    assert resolve(text, ref) == expected


@pytest.mark.parametrize("text", NOTHING)
def test_a_text_without_a_time_expression_resolves_to_nothing(text):
    assert resolve(text, MON) is None and query_window(text, MON) is None


def test_spans_carry_the_reference_timezone_and_a_naive_reference_is_utc():
    shanghai = timezone(timedelta(hours=8))
    early = datetime(2023, 5, 8, 1, 0, tzinfo=shanghai)  # still May 7 in UTC
    got = resolve("昨天", early)
    assert got == TimeSpan(datetime(2023, 5, 7, tzinfo=shanghai), datetime(2023, 5, 8, tzinfo=shanghai))
    assert got.start.utcoffset() == timedelta(hours=8)
    assert resolve("yesterday", datetime(2023, 5, 8, 15)) == day("2023-05-07")
    assert datetime(2023, 5, 7, 23, 59, tzinfo=UTC) in day("2023-05-07")
    assert datetime(2023, 5, 8, tzinfo=UTC) not in day("2023-05-07")  # half-open


def test_every_expression_of_a_text_is_found_in_order_with_its_place():
    text = "I moved to Oslo last week, and yesterday 我们去了北京; on the 7th of May we met."
    found = mentions(text, MON)
    assert [(f.text, text[f.start:f.end]) for f in found] == [
        ("last week", "last week"), ("yesterday", "yesterday"), ("on the 7th of May", "on the 7th of May")]
    assert [f.span for f in found] == [span("2023-05-01", "2023-05-08"), day("2023-05-07"), day("2023-05-07")]


@pytest.mark.parametrize("query, expected", [
    ("what did I do last week", QueryTime(span("2023-05-01", "2023-05-08"), "what did I do")),
    ("What did I do last week?", QueryTime(span("2023-05-01", "2023-05-08"), "What did I do?")),
    ("where did I travel in May", QueryTime(span("2023-05-01", "2023-06-01"), "where did I travel")),
    ("上个月我去了哪里", QueryTime(span("2023-04-01", "2023-05-01"), "我去了哪里")),
    ("上周五和昨天我吃了什么？", QueryTime(span("2023-05-05", "2023-05-08"), "和 我吃了什么？")),  # a gap: words part there
    ("what happened on the 7th of May, 2023?", QueryTime(day("2023-05-07"), "what happened?")),
    ("Which classes did Evan join in mid-August 2022?", QueryTime(span("2022-08-01", "2022-09-01"),
                                                                   "Which classes did Evan join?")),
    ("What food did Sam share a photo of on 19 August, 2022?", QueryTime(day("2022-08-19"),
                                                                          "What food did Sam share a photo of?")),
    ("Which US state was Sam travelling in during October 2022?", QueryTime(span("2022-10-01", "2022-11-01"),
                                                                             "Which US state was Sam travelling in?")),
    ("yesterday", QueryTime(day("2023-05-07"), "")),
])
def test_a_query_gives_its_time_window_and_the_words_left_to_search(query, expected):
    assert query_window(query, MON) == expected


def test_more_expressions_than_the_cap_are_cut_not_slow():
    found = mentions("昨天 " * 10_000, MON)
    assert len(found) == 100 and found[0].span == day("2023-05-07")


@pytest.mark.parametrize("text", [
    "x" * 1_000_000, "1" * 1_000_000, " " * 1_000_000, "3 " * 500_000, "a " * 500_000, "May " * 250_000,
    "in " * 333_333, "a few " * 166_666, "2023 " * 200_000, "上" * 1_000_000, "一" * 1_000_000,
    "上个" * 500_000, "3 may 上周 一 a few 年 " * 50_000, "İ" * 500_000 + "yesterday", "\n\t " * 333_333,
], ids=lambda t: f"{t[:12]!r}x{len(t)}")
def test_a_megabyte_of_adversarial_text_is_read_in_bounded_time(text):
    # A guard against patterns that backtrack: one that did would take minutes here, not a second.
    started = time.perf_counter()
    resolve(text, MON)
    query_window(text, MON)
    assert time.perf_counter() - started < 2.0  # two passes over a megabyte


def test_the_last_of_a_megabyte_is_still_read():
    assert resolve("x" * 1_000_000 + " yesterday", MON) == day("2023-05-07")
    (found,) = mentions("İSTANBUL İZMİR, yesterday", MON)  # İ lower-cases to two characters: places must hold
    assert (found.text, found.span) == ("yesterday", day("2023-05-07"))


def test_a_reference_that_is_not_a_time_is_a_bug_said_plainly():
    with pytest.raises(TypeError, match="ref must be a datetime, got str"):
        resolve("yesterday", "2023-05-08")  # type: ignore[arg-type]

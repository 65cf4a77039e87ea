"""Chinese time expressions: 昨天, 上周五, 下个月, 去年五月, 5月7日, 三天前, 两周前, 前几天."""

from __future__ import annotations

import re
from datetime import date, timedelta

from hermes_hub.services.memory.timeparse.reading import Reading, TimeSpan, monday, shift
from hermes_hub.services.memory.timeparse.rules import CN_NUMERALS, HAN, number, rule

WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 7,
            "1": 0, "2": 1, "3": 2, "4": 3, "5": 4, "6": 5, "7": 6}  # 末: the weekend
UNITS = {"天": "day", "日": "day", "周": "week", "星期": "week", "礼拜": "week", "月": "month", "年": "year"}
PARTS_OF_DAY = {"早上": "morning", "早晨": "morning", "上午": "morning", "中午": "noon", "下午": "afternoon",
                "傍晚": "evening", "晚上": "evening", "夜里": "night", "夜间": "night", "凌晨": "dawn"}
NUM = "[0-9一二两三四五六七八九十几][0-9一二两三四五六七八九十]{0,3}+"
SMALL = "[0-9一二三四五六七八九十]{1,3}+"
SP = r"\s{0,2}+"
PART = "(?P<part>早上|早晨|上午|中午|下午|傍晚|晚上|夜里|夜间|凌晨)"


@rule(rf"(?P<n>{NUM}){SP}(?:(?P<ago>(?:个{SP})?(?:天|日|周|星期|礼拜|年)|个{SP}月)"
      rf"{SP}(?P<dir>以前|之前|以后|之后|前|后)|(?P<year>年)(?:{SP}(?P<ym>{SMALL}){SP}月份?"
      rf"(?:{SP}(?P<yd>{SMALL}){SP}[日号])?)?|月份?(?:{SP}(?P<d>{SMALL}){SP}[日号])?)",
      CN_NUMERALS, HAN)
def _cnnumber(m: re.Match[str], k: Reading) -> TimeSpan | None:
    n = m["n"]
    if m["ago"]:  # 三天前, 两周后, 三个月前 (三月前 is "before March")
        unit = UNITS[m["ago"][-2:] if m["ago"].endswith(("星期", "礼拜")) else m["ago"][-1]]
        sign = 1 if m["dir"].endswith("前") else -1
        if n == "几":
            return k.ago(5, unit, 2) if sign > 0 else k.ago(-2, unit, -5)
        return k.ago(sign * number(n), unit) if len(n) <= 3 else None
    if m["year"]:  # 2023年, 2023年5月, 2023年5月7日
        if len(n) != 4 or not n.isdigit():
            return None
        if not m["ym"]:
            return k.year(int(n))
        return k.days(date(int(n), number(m["ym"]), number(m["yd"]))) if m["yd"] else \
            k.month(int(n), number(m["ym"]))
    month = number(n)  # 五月, 5月7日
    if not 1 <= month <= 12:
        return None
    return k.undated(m, month, number(m["d"]) if m["d"] else None)


@rule(rf"(?P<w>去年|今年|明年|前年|后年)(?:{SP}(?P<m>{SMALL}){SP}月份?(?:{SP}(?P<d>{SMALL}){SP}[日号])?)?",
      "", HAN)
def _cn_year(m: re.Match[str], k: Reading) -> TimeSpan:
    """去年, 去年五月, 去年5月7日."""
    year = k.day.year + {"前年": -2, "去年": -1, "今年": 0, "明年": 1, "后年": 2}[m["w"]]
    if not m["m"]:
        return k.year(year)
    return k.days(date(year, number(m["m"]), number(m["d"]))) if m["d"] else k.month(year, number(m["m"]))


@rule(rf"(?P<w>大前天|大后天|前天|昨天|昨日|今天|今日|明天|明日|后天|昨晚|昨夜|今晚|今夜|今早|明早|明晚){PART}?", "", HAN)
def _cn_day(m: re.Match[str], k: Reading) -> TimeSpan:
    w = m["w"]
    if len(w) == 2 and w[1] in "晚夜早":  # 昨晚, 今早
        return k.part(k.day + timedelta(days={"昨": -1, "今": 0, "明": 1}[w[0]]), "morning" if w[1] == "早" else "night")
    offset = {"大前天": -3, "前天": -2, "昨天": -1, "昨日": -1, "今天": 0, "今日": 0, "明天": 1, "明日": 1,
              "后天": 2, "大后天": 3}[w]
    d = k.day + timedelta(days=offset)
    return k.part(d, PARTS_OF_DAY[m["part"]]) if m["part"] else k.days(d)


@rule(r"(?P<mod>上上|下下|上|下|这|本)\s{0,2}+个?+\s{0,2}+(?:(?P<week>周|星期|礼拜)(?P<d>[一二三四五六日天末1-7])?|月(?!份))", "", HAN)
def _cn_relative(m: re.Match[str], k: Reading) -> TimeSpan:
    step = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2}[m["mod"]]
    if not m["week"]:  # 上个月, 下个月, 这个月
        return k.month(*shift(k.day.year, k.day.month, step))
    first = monday(k.day) + timedelta(weeks=step)
    if not m["d"]:
        return k.days(first, 7)
    wd = WEEKDAYS[m["d"]]
    return k.days(first + timedelta(days=5), 2) if wd == 7 else k.days(first + timedelta(days=wd))


@rule(r"前几天|这几天|最近几天", "", HAN)
def _cn_few_days(m: re.Match[str], k: Reading) -> TimeSpan:
    return k.ago(5, "day", 2) if m.group() == "前几天" else k.ago(4, "day", 0)

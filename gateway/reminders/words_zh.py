"""The Chinese time words of a reminder request: what each kind of phrase sets in ``Found``.

Numbers written in Chinese before a time unit (三点, 两小时, 十二月三日, 一刻钟) are first turned into
digits by ``cn2an`` (``digits``), so the patterns below see one form; numbers elsewhere (喝八杯水, 看一下)
are left alone. Then, as in ``words_en.py``, each entry of ``RULES`` is a pattern and what it says:
repeats (每天, 每周一三五, 每个工作日, 每月1号), "N units later" (20分钟后, 一个半小时后, 过两个钟头),
days (明天, 下周一, 这周五, 12月3日, 5号, 元旦), parts of the day (早上, 下午, 傍晚, 晚上, 凌晨, 下班前)
and clock times (3点, 3点半, 11点3刻, 17:30), in that order (README "Reminders").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from gateway.reminders.schedule import Repeat

Says = dict[str, Any]  # fields of ``Found`` a match sets
Apply = Callable[[re.Match[str]], Says]

_CN_NUMBER = re.compile(
    r"([零〇一二两三四五六七八九十百千]+)(?=个?半?(?:点|點|时|小时|钟头|鐘頭|分钟|分|秒|天|日|号|號|周|星期|礼拜|个月|月|年|刻))"
)
WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "七": 6}
_WD = "[一二三四五六日天]"
_WEEK = "(?:周|星期|礼拜|禮拜)"
PARTS = {
    "凌晨": "small_hours", "半夜": "small_hours", "午夜": "small_hours", "深夜": "small_hours",
    "夜里": "small_hours", "早上": "morning", "早晨": "morning", "上午": "morning", "清早": "morning",
    "清晨": "morning", "一早": "morning", "中午": "noon", "正午": "noon", "午间": "noon", "下午": "afternoon",
    "傍晚": "dusk", "黄昏": "dusk", "晚上": "night", "晚间": "night", "夜晚": "night", "下班前": "end_of_day",
    "下班时": "end_of_day", "下班的时候": "end_of_day",
}  # fmt: skip
_PARTS = "|".join(sorted(PARTS, key=len, reverse=True))
_UNITS = {
    "秒": "s", "秒钟": "s", "分": "m", "分钟": "m", "刻钟": "q", "小时": "h", "钟头": "h", "鐘頭": "h",
    "天": "d", "日": "d", "周": "w", "星期": "w", "礼拜": "w", "月": "mo", "个月": "mo", "年": "y",
}  # fmt: skip
_UNIT = "|".join(sorted(_UNITS, key=len, reverse=True))
HOLIDAYS = {"元旦": (1, 1), "平安夜": (12, 24), "圣诞节": (12, 25), "圣诞": (12, 25), "情人节": (2, 14)}


def digits(text: str) -> str:
    """``text`` with Chinese numbers before a time unit written in digits (cn2an)."""
    import cn2an

    def convert(match: re.Match[str]) -> str:
        if re.search(r"(?:周|星期|礼拜|禮拜)$", match.string[: match.start()]):
            return match[1]  # 周六 is a weekday, not six weeks
        try:
            return str(int(cn2an.cn2an(match[1], "smart")))
        except (ValueError, KeyError):
            return match[1]

    return _CN_NUMBER.sub(convert, text)


def weekdays_of(text: str) -> tuple[int, ...]:
    """The weekdays a run such as 一三五 or 二和周四 names."""
    return tuple(sorted({WEEKDAY[ch] for ch in text if ch in WEEKDAY}))


def _offset(amount: float, unit: str) -> Says:
    kind = _UNITS[unit]
    if kind in ("s", "m", "h", "q"):
        return {"exact": timedelta(minutes={"s": 1 / 60, "m": 1, "h": 60, "q": 15}[kind] * amount)}
    if kind in ("mo", "y"):
        return {"months_ahead": round(amount * (12 if kind == "y" else 1))}
    return {"days_ahead": round(amount * (7 if kind == "w" else 1))}


def _amount(number: str | None, half_before: str | None, half_after: str | None) -> float:
    base = 0.0 if number in (None, "", "半") else float(number)
    if number == "半" or half_before or half_after:
        base += 0.5
    return base


def _clock(hour: str, half: str | None, quarters: str | None, minute: str | None) -> Says:
    minutes = 30 if half else 15 * int(quarters) if quarters else int(minute or 0)
    return {"hour": int(hour), "minute": minutes}


def _day(offset: int, part: str | None = None, today: bool = False) -> Says:
    says: Says = {"day_offset": offset}
    if part:
        says["part"] = part
    if today:
        says["today_bound"] = True
    return says


def _rule(pattern: str, apply: Apply) -> tuple[re.Pattern[str], Apply]:
    return re.compile(pattern), apply


RULES: list[tuple[re.Pattern[str], Apply]] = [
    # ---- repeats
    _rule(
        r"每个?月的?(\d{1,2})(?:号|號|日)",
        lambda m: {"repeat": Repeat("monthly", day=int(m[1]))},
    ),
    _rule(
        rf"每个?工作日(?:每天)?|工作日每天|(?:从)?{_WEEK}一(?:到|至){_WEEK}?五(?:每天)?",
        lambda m: {"repeat": Repeat("weekdays")},
    ),
    _rule(r"每个?周末", lambda m: {"repeat": Repeat("weekly", (5, 6))}),
    _rule(
        rf"(?:每个?|每逢){_WEEK}({_WD}(?:(?:、|和|及|与|跟|,|，)?{_WEEK}?{_WD})*)",
        lambda m: {"repeat": Repeat("weekly", weekdays_of(m[1]))},
    ),
    _rule(
        r"每(?:个)?(?:晚|晚上|夜)",
        lambda m: {"repeat": Repeat("daily"), "part": "night"},
    ),
    _rule(r"每天|每日|天天", lambda m: {"repeat": Repeat("daily")}),
    # ---- N units later
    _rule(
        rf"(?:再?过)?(\d+(?:\.\d+)?|半)个?(半)?({_UNIT})(半)?(?:以后|之后|过后|后)",
        lambda m: _offset(_amount(m[1], m[2], m[4]), m[3]),
    ),
    _rule(
        rf"再?过(\d+(?:\.\d+)?|半)个?(半)?({_UNIT})(半)?",
        lambda m: _offset(_amount(m[1], m[2], m[4]), m[3]),
    ),
    # ---- days
    _rule(r"昨天|昨日|昨晚|昨儿", lambda m: {"past": True}),
    _rule(r"大后天", lambda m: _day(3)),
    _rule(r"后天|后儿个?", lambda m: _day(2)),
    _rule(r"明早|明晨", lambda m: _day(1, "morning")),
    _rule(r"明晚", lambda m: _day(1, "night")),
    _rule(r"明天|明儿个?|明日", lambda m: _day(1)),
    _rule(r"今晚", lambda m: _day(0, "night", today=True)),
    _rule(r"今早", lambda m: _day(0, "morning", today=True)),
    _rule(r"今天|今儿个?|今日", lambda m: _day(0, today=True)),
    _rule(
        "|".join(sorted(HOLIDAYS, key=len, reverse=True)),
        lambda m: {"month_day": (None, *HOLIDAYS[m[0]])},
    ),
    _rule(
        r"(?:(\d{4})年)?(\d{1,2})月(\d{1,2})(?:日|号|號)?",
        lambda m: _date(int(m[1]) if m[1] else None, int(m[2]), int(m[3])),
    ),
    _rule(r"(\d{1,2})(?:号|號|日)", lambda m: {"day_of_month": int(m[1])}),
    _rule(
        rf"(下下个?|下个?|这个?|本|今)?{_WEEK}({_WD})",
        lambda m: {"weekday": WEEKDAY[m[2]], "week_ahead": (m[1] or "").count("下")},
    ),
    _rule(rf"下个?{_WEEK}", lambda m: {"next_week": True}),
    _rule(r"(?:这个?|本)?周末", lambda m: {"weekend": True}),
    # ---- parts of the day, then clock times
    _rule(_PARTS, lambda m: {"part": PARTS[m[0]]}),
    _rule(r"(\d{1,2})[:：](\d{2})", lambda m: _clock(m[1], None, None, m[2])),
    _rule(
        r"(\d{1,2})(?:点|點|时)钟?(?:(半)|(\d)刻|(\d{1,2})分?)?",
        lambda m: _clock(m[1], m[2], m[3], m[4]),
    ),
    _rule(r"晚(?!饭|餐)", lambda m: {"part": "night"}),
]


def _date(year: int | None, month: int, day: int) -> Says:
    if not 1 <= month <= 12 or not 1 <= day <= 31:
        return {"impossible": True}
    return {"month_day": (year, month, day)}

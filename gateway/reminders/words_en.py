"""The English time words of a reminder request: what each kind of phrase sets in ``Found``.

Each entry of ``RULES`` is a pattern (matched case-insensitively on the NFKC-normalised request) and what
a match says; ``parsing.scan`` applies them in this order, each character of the request used by one
match at most, so a repeat ("every Monday") is read before a weekday ("Monday") and a clock time before a
bare number. Calendar dates written with a month name or as ISO ("3 December", "Dec 24th", "2026-12-15")
are read by ``dateparser`` (``calendar_date``); the rest is a small grammar of the kinds of phrase people
use: relative days, weekdays, parts of the day, clock times, "in N units", repeats (README "Reminders").
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from gateway.reminders.schedule import Repeat

Says = dict[str, Any]  # fields of ``Found`` a match sets
Apply = Callable[[re.Match[str]], Says]

NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "twenty-five": 25, "thirty": 30, "forty": 40, "forty-five": 45, "fifty": 50, "sixty": 60,
    "ninety": 90, "a couple of": 2, "a couple": 2, "couple of": 2, "a few": 3, "few": 3,
}  # fmt: skip
_NUM = "|".join(sorted((re.escape(w) for w in NUMBERS), key=len, reverse=True))
_HOUR_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
WEEKDAYS = {
    "monday": 0, "mon": 0, "tuesday": 1, "tue": 1, "tues": 1, "wednesday": 2, "wed": 2, "weds": 2,
    "thursday": 3, "thu": 3, "thur": 3, "thurs": 3, "friday": 4, "fri": 4, "saturday": 5, "sat": 5,
    "sunday": 6, "sun": 6,
}  # fmt: skip
_WD_FULL = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_WD_ANY = "|".join(sorted(WEEKDAYS, key=len, reverse=True))
_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec"
)
_ORD = r"(?:st|nd|rd|th)"
_PART = r"(morning|afternoon|evening|night)"
UNITS = {
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "m": "m", "min": "m", "mins": "m", "minute": "m", "minutes": "m",
    "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
    "d": "d", "day": "d", "days": "d",
    "w": "w", "wk": "w", "wks": "w", "week": "w", "weeks": "w",
    "month": "mo", "months": "mo", "year": "y", "years": "y", "yr": "y", "yrs": "y",
}  # fmt: skip
_UNIT = "|".join(sorted(UNITS, key=len, reverse=True))
HOLIDAYS = {
    "christmas eve": (12, 24),
    "christmas": (12, 25),
    "new year's eve": (12, 31),
    "new year's": (1, 1),
}


def number(word: str) -> float:
    """A count written in digits or words ("20", "twenty", "a couple of")."""
    word = " ".join(word.lower().split())
    return NUMBERS[word] if word in NUMBERS else float(word)


def weekday_list(text: str) -> tuple[int, ...]:
    """The weekdays named in ``text`` ("Monday, Wednesday and Friday")."""
    return tuple(sorted({WEEKDAYS[w] for w in re.findall(_WD_ANY, text.lower()) if w in WEEKDAYS}))


def offset(amount: float, unit: str) -> Says:
    """ "in N units": elapsed time for seconds to hours, calendar days for days to months."""
    kind = UNITS[unit.lower()]
    if kind in ("s", "m", "h"):
        return {"exact": timedelta(**{{"s": "seconds", "m": "minutes", "h": "hours"}[kind]: amount})}
    if kind in ("mo", "y"):
        return {"months_ahead": round(amount * (12 if kind == "y" else 1))}
    return {"days_ahead": round(amount * (7 if kind == "w" else 1))}


def calendar_date(text: str, year: str | None, month: str, day: str) -> Says:
    """A date with a month name, read by dateparser; a day the month does not have is impossible."""
    import dateparser

    base = datetime(2024, 1, 1)  # a leap year: 29 February is a date, the year is decided later
    settings = {"RELATIVE_BASE": base, "PREFER_DAY_OF_MONTH": "first", "REQUIRE_PARTS": ["day", "month"]}
    words = re.sub(r"^(?:on|the)\s+", "", text.strip(), flags=re.I)
    parsed = dateparser.parse(words, languages=["en"], settings=settings)
    if parsed is None:
        index = _month_index(month)
        if int(day) > calendar.monthrange(int(year) if year else 2024, index)[1]:
            return {"impossible": True}
        return {}
    return {"month_day": (int(year) if year else None, parsed.month, parsed.day)}


def _month_index(name: str) -> int:
    short = name.lower()[:3]
    return [m.lower()[:3] for m in calendar.month_name[1:]].index(short) + 1


def _hour(text: str) -> int:
    text = text.lower()
    return _HOUR_WORDS.split("|").index(text) + 1 if text in _HOUR_WORDS.split("|") else int(text)


def _clock(hour: int, minute: int = 0, meridiem: str | None = None, **more: Any) -> Says:
    says: Says = {"hour": hour, "minute": minute, **more}
    if meridiem:
        says["meridiem"] = "pm" if meridiem.lower().startswith("p") else "am"
    return says


def _rule(pattern: str, apply: Apply) -> tuple[re.Pattern[str], Apply]:
    return re.compile(pattern, re.IGNORECASE), apply


def _repeat(repeat: Repeat, part: str | None = None) -> Says:
    return {"repeat": repeat, **({"part": part.lower()} if part else {})}


RULES: list[tuple[re.Pattern[str], Apply]] = [
    # ---- repeats
    _rule(
        rf"\b(?:on\s+|every\s+|each\s+)?(?:the\s+)?(\d{{1,2}}){_ORD}?\s+(?:day\s+)?of\s+(?:every|each|the)\s+month\b",
        lambda m: _repeat(Repeat("monthly", day=int(m[1]))),
    ),
    _rule(
        rf"\b(?:every|each)\s+(?:month\s+on\s+)?(?:the\s+)?(\d{{1,2}}){_ORD}(?:\s+of\s+the\s+month)?\b"
        rf"|\b(?:every|each)\s+month\s+on\s+the\s+(\d{{1,2}}){_ORD}?\b"
        rf"|\bmonthly\s+on\s+the\s+(\d{{1,2}}){_ORD}?\b|\bon\s+the\s+(\d{{1,2}}){_ORD}?\s+(?:every|each)\s+month\b",
        lambda m: _repeat(Repeat("monthly", day=int(next(g for g in m.groups() if g)))),
    ),
    _rule(
        rf"\b(?:every|each)\s+week\s*day(?:s)?(?:\s+{_PART})?\b|\b(?:on\s+)?week\s*days(?:\s+{_PART})?\b"
        rf"|\b(?:every\s+day\s+)?(?:from\s+)?monday\s+(?:to|through|thru|-)\s+friday\b",
        lambda m: _repeat(Repeat("weekdays"), m.group(1) or m.group(2)),
    ),
    _rule(
        r"\b(?:every|each)\s+weekend\b|\b(?:on\s+)?weekends\b",
        lambda m: _repeat(Repeat("weekly", (5, 6))),
    ),
    _rule(
        rf"\b(?:every|each)\s+(?:{_WD_ANY})s?(?:\s*(?:,\s*and|,|and|&)\s*(?:{_WD_ANY})s?)*(?:\s+{_PART})?\b"
        rf"|\bon\s+(?:{_WD_FULL})s(?:\s*(?:,\s*and|,|and|&)\s*(?:{_WD_FULL})s)*\b",
        lambda m: _repeat(Repeat("weekly", weekday_list(re.sub(_PART, "", m[0], flags=re.I))), m.group(1)),
    ),
    _rule(
        rf"\b(?:every\s*day|each\s+day|daily)\b|\b(?:every|each)\s+{_PART}\b",
        lambda m: _repeat(Repeat("daily"), m.group(1)),
    ),
    # ---- in N units (elapsed time or calendar days)
    _rule(
        r"\bin\s+(?:half\s+an?\s+hour|an?\s+half\s+hour|30\s+mins?)\b",
        lambda m: {"exact": timedelta(minutes=30)},
    ),
    _rule(
        r"\bin\s+(?:a\s+)?quarter\s+of\s+an\s+hour\b",
        lambda m: {"exact": timedelta(minutes=15)},
    ),
    _rule(
        rf"\bin\s+({_NUM}|\d+(?:\.\d+)?)\s*(and\s+a\s+half\s+)?({_UNIT})(\s+and\s+a\s+half)?\b",
        lambda m: offset(number(m[1]) + (0.5 if m[2] or m[4] else 0), m[3]),
    ),
    _rule(
        rf"\bin\s+({_NUM}|\d{{1,3}})\b(?!\s*(?:[:.]\d|am\b|pm\b|a\.m|p\.m|{_UNIT}\b|o'?clock))",
        lambda m: offset(number(m[1]), "minutes"),
    ),
    # ---- days
    _rule(r"\byesterday\b", lambda m: {"past": True}),
    _rule(r"\b(?:the\s+)?day\s+after\s+(?:tomorrow|tmrw)\b", lambda m: {"day_offset": 2}),
    _rule(r"\b(?:tomorrow|tomorow|tmrw|tmr|2morrow)\b", lambda m: {"day_offset": 1}),
    _rule(
        r"\b(?:later\s+)?today\b",
        lambda m: {"day_offset": 0, "today_bound": True},
    ),
    _rule(
        r"\btonight\b",
        lambda m: {"part": "night", "today_bound": True},
    ),
    _rule(
        rf"\bthis\s+{_PART}\b",
        lambda m: {"part": m[1].lower(), "today_bound": True},
    ),
    _rule(
        r"\b(?:on\s+)?(christmas\s+(?:eve|day)|new\s+year'?s\s+(?:eve|day))\b|\bon\s+(christmas|new\s+year'?s)\b",
        lambda m: {"month_day": (None, *_holiday(m[1] or m[2]))},
    ),
    _rule(
        r"\b(?:on\s+)?(\d{4})-(\d{1,2})-(\d{1,2})\b",
        lambda m: _iso(int(m[1]), int(m[2]), int(m[3])),
    ),
    _rule(
        rf"\b(?:on\s+)?(?:the\s+)?(\d{{1,2}}){_ORD}?\s+(?:of\s+)?({_MONTHS})\b\.?(?:,?\s+(\d{{4}}))?",
        lambda m: calendar_date(m[0], m[3], m[2], m[1]),
    ),
    _rule(
        rf"\b(?:on\s+)?({_MONTHS})\.?\s+(?:the\s+)?(\d{{1,2}})(?!\d|:|\.\d|\s*(?:am|pm)\b){_ORD}?\b(?:,?\s+(\d{{4}}))?",
        lambda m: calendar_date(m[0], m[3], m[1], m[2]),
    ),
    _rule(rf"\b(?:on\s+)?the\s+(\d{{1,2}}){_ORD}\b", lambda m: {"day_of_month": int(m[1])}),
    _rule(
        rf"\b(?:on\s+)?({_WD_ANY})\.?\s+(?:of\s+)?next\s+week\b|\bnext\s+week\s+on\s+({_WD_ANY})\b",
        lambda m: {"weekday": WEEKDAYS[(m[1] or m[2]).lower()], "week_ahead": 1},
    ),
    _rule(r"\b(?:next|the\s+following)\s+week\b", lambda m: {"next_week": True}),
    _rule(r"\b(?:(?:this|the|next)\s+)?weekend\b", lambda m: {"weekend": True}),
    _rule(
        rf"\b(?:(?:on|this|next|coming|this\s+coming|by)\s+)?({_WD_FULL})\b"
        rf"|\b(?:on|this|next|by)\s+({_WD_ANY})\b\.?|\b({_WD_ANY})\.?(?=\s+(?:at\b|@|\d|{_PART}))",
        lambda m: {"weekday": WEEKDAYS[(m[1] or m[2] or m[3]).lower()]},
    ),
    # ---- clock times
    _rule(
        r"(?:\b(?:at|by|for|around|about)\s+|@\s*|\b)(\d{1,2})(?:[:.](\d{2}))?\s*([ap])\.?m\b\.?",
        lambda m: _clock(int(m[1]), int(m[2] or 0), m[3]),
    ),
    _rule(
        rf"\b(?:at\s+)?half\s+past\s+(\d{{1,2}}|{_HOUR_WORDS})\b",
        lambda m: _clock(_hour(m[1]), 30),
    ),
    _rule(
        rf"\b(?:at\s+)?(?:a\s+)?quarter\s+past\s+(\d{{1,2}}|{_HOUR_WORDS})\b",
        lambda m: _clock(_hour(m[1]), 15),
    ),
    _rule(
        rf"\b(?:at\s+)?(?:a\s+)?quarter\s+to\s+(\d{{1,2}}|{_HOUR_WORDS})\b",
        lambda m: _clock((_hour(m[1]) - 1) % 24, 45),
    ),
    _rule(
        rf"\b(?:at\s+)?(\d{{1,2}}|{_HOUR_WORDS})\s+o'?clock\b",
        lambda m: _clock(_hour(m[1])),
    ),
    _rule(
        r"(?:\b(?:at|by|for|around)\s+|@\s*|\b)(\d{1,2}):(\d{2})\b|(?:\b(?:at|by|for|around)\s+|@\s*)(\d{1,2})\.(\d{2})\b",
        lambda m: _clock(int(m[1] or m[3]), int(m[2] or m[4])),
    ),
    _rule(
        rf"(?:\b(?:at|around)\s+|@\s*)(\d{{1,2}}|{_HOUR_WORDS})\b(?!\s*(?:{_UNIT})\b|[:.]\d)",
        lambda m: _clock(_hour(m[1])),
    ),
    _rule(r"\b(?:at\s+)?(?:noon|midday)\b", lambda m: _clock(12, part="noon")),
    _rule(r"\b(?:at\s+)?midnight\b", lambda m: _clock(0)),
    # ---- parts of the day
    _rule(r"\bfirst\s+thing(?:\s+in\s+the\s+morning)?\b", lambda m: {"part": "morning"}),
    _rule(
        r"\b(?:at\s+|by\s+)?(?:the\s+)?end\s+of\s+(?:the\s+)?(?:work\s*)?day\b|\b(?:by\s+)?(?:eod|cob)\b",
        lambda m: {"part": "end_of_day"},
    ),
    _rule(r"\b(?:at\s+)?lunch\s*time\b|\bat\s+lunch\b", lambda m: {"part": "noon"}),
    _rule(rf"\b(?:in\s+the\s+|at\s+)?{_PART}\b", lambda m: {"part": m[1].lower()}),
]


def _holiday(name: str) -> tuple[int, int]:
    key = " ".join(name.lower().replace("’", "'").split())
    key = key.replace(" day", "").replace("years", "year's")
    return HOLIDAYS.get(key, HOLIDAYS["christmas"])


def _iso(year: int, month: int, day: int) -> Says:
    if not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(year, month)[1]:
        return {"impossible": True}
    return {"month_day": (year, month, day)}

"""Time references in a message ("on 3 June, 2023", "in March", "yesterday", "上周", "2023年6月") as a window.

People ask memory by time: "what did I tell you yesterday?", "what did we decide in March?". The words of
a date match nothing useful in the full-text index (a "2023" is in hundreds of memories), but the date
itself says which memories are meant. ``find_window`` returns the window the message names and the text
with the date words removed; retrieval then favours memories written inside the window.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTH_RE = "|".join(sorted((re.escape(m) for m in _MONTHS), key=len, reverse=True))

# Slack around a named day: people say "on Friday" about something told a day or two later.
DAY_SLACK = timedelta(days=3)
MONTH_SLACK = timedelta(days=7)


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """An inclusive UTC date range a message refers to."""

    start: date
    end: date


_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), "ymd"),
    (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?({_MONTH_RE})\.?,? (\d{{4}})\b", re.I), "dmy"),
    (re.compile(rf"\b({_MONTH_RE})\.? (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b", re.I), "mdy"),
    (re.compile(rf"\b({_MONTH_RE}),? (\d{{4}})\b", re.I), "my"),
    (re.compile(r"(\d{4})年(\d{1,2})月(\d{1,2})[日号]"), "ymd"),
    (re.compile(r"(\d{4})年(\d{1,2})月"), "ym"),
    (re.compile(r"(?<!\d)(\d{1,2})月(\d{1,2})[日号]"), "md"),
    (re.compile(r"\b(?:in|during|of) (\d{4})\b", re.I), "y"),
    (re.compile(r"(\d{4})年"), "y"),
]

_RELATIVE: list[tuple[re.Pattern[str], int, int]] = [
    # (pattern, days back to window start, days back to window end)
    # A memory of yesterday's talk may be written today (extraction waits for a quiet gap or 03:00).
    (re.compile(r"\byesterday\b|昨天|昨日", re.I), 1, 0),
    (re.compile(r"前天", re.I), 2, 1),
    (re.compile(r"\btoday\b|今天", re.I), 0, 0),
    (re.compile(r"\blast week(?:end)?\b|上周|上个?星期|上礼拜", re.I), 13, 0),
    (re.compile(r"\blast month\b|上个?月", re.I), 62, 0),
    (re.compile(r"\blast year\b|去年", re.I), 730, 180),
    (re.compile(r"\bthis week\b|这周|本周", re.I), 7, 0),
    (re.compile(r"\bthis month\b|这个月|本月", re.I), 31, 0),
]


def _month_window(year: int, month: int) -> TimeWindow:
    last = calendar.monthrange(year, month)[1]
    return TimeWindow(date(year, month, 1) - MONTH_SLACK, date(year, month, last) + MONTH_SLACK)


def _day_window(day: date) -> TimeWindow:
    return TimeWindow(day - DAY_SLACK, day + DAY_SLACK)


def _absolute(kind: str, groups: tuple[str, ...], today: date) -> TimeWindow | None:
    try:
        if kind == "ymd":
            return _day_window(date(int(groups[0]), int(groups[1]), int(groups[2])))
        if kind == "dmy":
            return _day_window(date(int(groups[2]), _MONTHS[groups[1].lower()], int(groups[0])))
        if kind == "mdy":
            return _day_window(date(int(groups[2]), _MONTHS[groups[0].lower()], int(groups[1])))
        if kind == "my":
            return _month_window(int(groups[1]), _MONTHS[groups[0].lower()])
        if kind == "ym":
            return _month_window(int(groups[0]), int(groups[1]))
        if kind == "md":
            day = date(today.year, int(groups[0]), int(groups[1]))
            return _day_window(day if day <= today else day.replace(year=today.year - 1))
        if kind == "y":
            year = int(groups[0])
            return TimeWindow(date(year, 1, 1), date(year, 12, 31)) if 1900 < year < 2200 else None
    except (ValueError, OverflowError):  # 31 February, year 0001 minus slack: not a usable window
        return None
    return None


def find_window(text: str, now: datetime) -> tuple[TimeWindow | None, str]:
    """The time window ``text`` names (the first one found) and ``text`` without that expression."""
    today = now.date()
    for pattern, kind in _PATTERNS:
        found = pattern.search(text)
        if found:
            window = _absolute(kind, found.groups(), today)
            if window is not None:
                return window, text[: found.start()] + " " + text[found.end() :]
    for pattern, back_start, back_end in _RELATIVE:
        found = pattern.search(text)
        if found:
            window = TimeWindow(today - timedelta(days=back_start), today - timedelta(days=back_end))
            return window, text[: found.start()] + " " + text[found.end() :]
    return None, text

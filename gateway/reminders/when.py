"""From what the time words of a request said (``Found``) to the local time it is due, by the rules in
README "Reminders" (the same as ``bench/data/reminder_phrasings.json``'s ``rules``).

``Found`` is filled by the language grammars (``words_en.py``, ``words_zh.py``); ``resolve`` turns it
into the first run's local wall-clock time and repeat rule at a given "now", or a ``Problem`` (the time
has passed, no such date, a day of the month that could be two months, no time at all). Pure.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from gateway.reminders.schedule import Repeat, first_run, moment, shown

DEFAULT_TIME = time(9, 0)  # a date without a time


@dataclass(frozen=True, slots=True)
class Part:
    """A part of the day: its time when no clock time is given, and what a bare hour means in it."""

    name: str
    default: time
    meridiem: str  # "am", "pm", "noon" (12 stays, 1.. are afternoon), "small" (12 is midnight)


PARTS = {
    p.name: p
    for p in (
        Part("morning", time(9, 0), "am"),
        Part("small_hours", time(0, 0), "small"),
        Part("noon", time(12, 0), "noon"),
        Part("afternoon", time(15, 0), "pm"),
        Part("end_of_day", time(17, 0), "pm"),
        Part("dusk", time(18, 0), "pm"),
        Part("evening", time(19, 0), "pm"),
        Part("night", time(20, 0), "pm"),
    )
}


@dataclass(slots=True)
class Found:
    """What the time words of one request said; ``None`` where they said nothing."""

    day_offset: int | None = None  # today 0, tomorrow 1, the day after 2…
    weekday: int | None = None  # 0 = Monday
    week_ahead: int = 0  # with ``weekday``: 0 the coming one, 1 that day of next week
    month_day: tuple[int | None, int, int] | None = None  # (year or None, month, day)
    day_of_month: int | None = None  # "on the 5th": no month said
    next_week: bool = False
    weekend: bool = False
    exact: timedelta | None = None  # in N minutes/hours: elapsed time
    days_ahead: int | None = None  # in N days/weeks: the date moves, the clock time stays
    months_ahead: int | None = None
    hour: int | None = None
    minute: int = 0
    meridiem: str | None = None  # "am", "pm"
    part: str | None = None  # a key of PARTS
    today_bound: bool = False  # "today", "tonight", "this evening": not tomorrow if it passed
    repeat: Repeat | None = None
    past: bool = False  # "yesterday"
    impossible: bool = False  # a date that does not exist (30 February)
    spans: list[tuple[int, int]] = field(default_factory=list)  # where the time words were

    @property
    def dated(self) -> bool:
        """A day was named (not only a time of day)."""
        return any(
            (
                self.day_offset not in (None, 0),
                self.weekday is not None,
                self.month_day is not None,
                self.day_of_month is not None,
                self.next_week,
                self.weekend,
                self.days_ahead is not None,
                self.months_ahead is not None,
                self.repeat is not None,
            )
        )

    @property
    def anything(self) -> bool:
        """Some time word was found."""
        return bool(self.spans) or self.past or self.impossible


@dataclass(frozen=True, slots=True)
class Problem:
    """Why a request has no time: ``past``, ``impossible``, ``ambiguous``, ``no_time``; ``hint`` is a
    date to suggest (the month an ambiguous day of the month would fall in)."""

    kind: str
    hint: date | None = None


@dataclass(frozen=True, slots=True)
class Due:
    """The first run: the wall-clock time meant (``local``), the one it rings at (``shown``: differs
    only when the zone skips that time) and the repeat rule."""

    local: datetime
    shown: datetime
    repeat: Repeat | None


def resolve(found: Found, now_local: datetime, zone: ZoneInfo) -> Due | Problem:
    """The first run of what ``found`` says, at ``now_local`` (naive, the person's wall clock)."""
    if found.past:
        return Problem("past")
    if found.impossible:
        return Problem("impossible")
    if not found.anything:
        return Problem("no_time")
    if found.exact is not None:  # elapsed time: count it in UTC, then read the wall clock
        at = moment(now_local, zone) + found.exact
        local = at.astimezone(zone).replace(tzinfo=None, second=0, microsecond=0)
        return Due(local, local, None)
    if found.repeat is not None:
        local = first_run(found.repeat, _dated_time(found) or DEFAULT_TIME, now_local, zone)
        return Due(local, shown(local, zone), found.repeat)
    day = _day(found, now_local)
    if isinstance(day, Problem):
        return day
    if day is None or (day == now_local.date() and not found.dated):
        local_or_problem = _undated(found, now_local)
    else:
        local_or_problem = datetime.combine(day, _dated_time(found) or now_time(found, now_local))
    if isinstance(local_or_problem, Problem):
        return local_or_problem
    if moment(local_or_problem, zone) <= moment(now_local, zone):
        return Problem("past")
    return Due(local_or_problem, shown(local_or_problem, zone), None)


def now_time(found: Found, now_local: datetime) -> time:
    """The clock time of a date-only request: 09:00, except "in N days" keeps now's clock time."""
    if found.days_ahead is not None or found.months_ahead is not None:
        return now_local.time().replace(second=0, microsecond=0)
    return DEFAULT_TIME


def _dated_time(found: Found) -> time | None:
    """The clock time when a day is named: a bare hour 7-11 is morning, 12 noon, 1-6 afternoon."""
    if found.hour is None:
        return PARTS[found.part].default if found.part else None
    hour = _with_meridiem(found)
    if hour is None:
        hour = (
            found.hour if found.hour == 0 or found.hour >= 12 else found.hour + (12 if found.hour <= 6 else 0)
        )
    return time(hour % 24, found.minute)


def _with_meridiem(found: Found) -> int | None:
    """The 24-hour hour when am/pm or a part of the day says which half; None when nothing does."""
    hour = found.hour
    assert hour is not None
    meridiem = found.meridiem or (PARTS[found.part].meridiem if found.part else None)
    if meridiem is None or hour > 12:
        return hour if hour > 12 else None
    if meridiem == "am":
        return 0 if hour == 12 else hour
    if meridiem == "small":
        return 0 if hour == 12 else hour
    if meridiem == "noon":
        return 12 if hour == 12 else hour + 12
    # pm; 12 in the evening or at night is midnight ("晚上12点"), else noon ("12pm")
    if hour == 12:
        return 24 if found.part in ("evening", "night") else 12
    return hour + 12


def _undated(found: Found, now_local: datetime) -> datetime | Problem:
    """A time of day without a day: the next time the clock shows it (today only, when "today" or
    "tonight" was said)."""
    today = now_local.date()
    tomorrow = today + timedelta(days=1)
    minute = found.minute
    if found.hour is None:
        if not found.part:
            return Problem("no_time")
        times = [datetime.combine(today, PARTS[found.part].default)]
    else:
        fixed = _with_meridiem(found)
        if fixed is not None:
            times = [datetime.combine(today, time(fixed % 24, minute)) + timedelta(days=fixed // 24)]
        elif found.hour == 0:  # midnight: the one that ends today
            times = [datetime.combine(tomorrow, time(0, minute))]
        elif found.hour == 12:  # a bare 12: noon, or the midnight after it
            times = [datetime.combine(today, time(12, minute)), datetime.combine(tomorrow, time(0, minute))]
        else:  # a bare hour: whichever half of the day comes first
            times = [datetime.combine(today, time(found.hour, minute))]
            times.append(times[0] + timedelta(hours=12))
    for local in sorted(times):
        if local > now_local:
            return local
    if found.today_bound:
        return Problem("past")
    return min(times) + timedelta(days=1)


def _day(found: Found, now_local: datetime) -> date | Problem | None:
    """The day named, or None when none was; a day of the month alone may be a ``Problem``."""
    today = now_local.date()
    if found.days_ahead is not None:
        return today + timedelta(days=found.days_ahead)
    if found.months_ahead is not None:
        return _add_months(today, found.months_ahead)
    if found.day_offset is not None and found.day_offset != 0:
        return today + timedelta(days=found.day_offset)
    if found.month_day is not None:
        return _calendar_day(found, now_local)
    if found.day_of_month is not None:
        return _day_of_month(found, now_local)
    at = _dated_time(found) or DEFAULT_TIME
    if found.weekday is not None:
        if found.week_ahead:
            monday = today - timedelta(days=today.weekday()) + timedelta(weeks=found.week_ahead)
            return monday + timedelta(days=found.weekday)
        ahead = (found.weekday - today.weekday()) % 7
        if ahead == 0 and datetime.combine(today, at) <= now_local:
            ahead = 7
        return today + timedelta(days=ahead)
    if found.next_week:
        return today - timedelta(days=today.weekday()) + timedelta(weeks=1)
    if found.weekend:
        ahead = (5 - today.weekday()) % 7
        if today.weekday() == 6:
            ahead = 0 if datetime.combine(today, at) > now_local else 6
        elif ahead == 0 and datetime.combine(today, at) <= now_local:
            ahead = 1  # Saturday evening: Sunday
        return today + timedelta(days=ahead)
    return today if found.day_offset == 0 else None


def _calendar_day(found: Found, now_local: datetime) -> date | Problem:
    assert found.month_day is not None
    year, month, day = found.month_day
    today = now_local.date()
    for candidate_year in [year] if year is not None else [today.year, today.year + 1]:
        if day > calendar.monthrange(candidate_year, month)[1]:
            if year is not None or (month, day) != (2, 29):
                return Problem("impossible")
            continue  # 29 February without a year: this year's or next year's, else no such date
        candidate = date(candidate_year, month, day)
        if year is not None or candidate >= today:
            return candidate
    return Problem("impossible")


def _day_of_month(found: Found, now_local: datetime) -> date | Problem:
    """This month's day when it is still ahead; else the person may mean next month or a slip: ask."""
    assert found.day_of_month is not None
    today = now_local.date()
    day = found.day_of_month
    if day > 31:
        return Problem("impossible")
    last = calendar.monthrange(today.year, today.month)[1]
    at = _dated_time(found) or DEFAULT_TIME
    if day <= last and (day > today.day or (day == today.day and datetime.combine(today, at) > now_local)):
        return date(today.year, today.month, day)
    following = _add_months(today.replace(day=1), 1)
    if day <= calendar.monthrange(following.year, following.month)[1]:
        return Problem("ambiguous", following.replace(day=day))
    return Problem("ambiguous")


def _add_months(day: date, months: int) -> date:
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))

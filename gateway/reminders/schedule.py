"""When a reminder runs: repeat rules, their next run, and a wall-clock time turned into a moment.

A reminder keeps the wall-clock time the person meant (README "Reminders"): "every day at 8" is 08:00 in
their zone whatever summer time does, so each run is computed as a local date and time first, and only
then placed in the zone (``moment``). A local time the zone skips (the hour clocks go forward) moves
forward by the skipped hour, as ``zoneinfo`` places it; a time the zone repeats (clocks go back) is its
first occurrence.

The repeat rules (a small, documented set): ``daily``, ``weekdays`` (Monday to Friday), ``weekly`` on
given days (``weekly:mon,thu``), ``monthly`` on a day (``monthly:31``: a month without that day runs on
its last day). Pure functions; no clock of their own.
"""

from __future__ import annotations

import calendar
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
LOCAL_FORMAT = "%Y-%m-%d %H:%M"


@dataclass(frozen=True, slots=True)
class Repeat:
    """A repeat rule: ``kind`` daily, weekdays, weekly (``days``: 0 = Monday) or monthly (``day``)."""

    kind: str
    days: tuple[int, ...] = ()
    day: int = 0

    def __str__(self) -> str:
        if self.kind == "weekly":
            return "weekly:" + ",".join(DAYS[d] for d in self.days)
        if self.kind == "monthly":
            return f"monthly:{self.day}"
        return self.kind

    def matches(self, day: date) -> bool:
        """Whether the rule runs on ``day``."""
        if self.kind == "daily":
            return True
        if self.kind == "weekdays":
            return day.weekday() < 5
        if self.kind == "weekly":
            return day.weekday() in self.days
        if self.kind == "monthly":
            return day.day == min(self.day, calendar.monthrange(day.year, day.month)[1])
        return False


def parse_repeat(text: str) -> Repeat | None:
    """The rule stored as ``text`` ("" is a one-off: None); ValueError when it is not one."""
    text = text.strip().lower()
    if not text:
        return None
    kind, _, rest = text.partition(":")
    if kind in ("daily", "weekdays") and not rest:
        return Repeat(kind)
    if kind == "weekly" and rest:
        days = tuple(sorted({DAYS.index(d.strip()[:3]) for d in rest.split(",") if d.strip()[:3] in DAYS}))
        if days and len(days) == len([d for d in rest.split(",") if d.strip()]):
            return Repeat("weekly", days)
    if kind == "monthly" and rest.isdigit() and 1 <= int(rest) <= 31:
        return Repeat("monthly", day=int(rest))
    raise ValueError(
        f"unknown repeat rule {text!r}: use daily, weekdays, weekly:mon,thu (days mon..sun) "
        "or monthly:N (1-31)"
    )


def moment(local: datetime, zone: ZoneInfo) -> datetime:
    """The UTC moment of a wall-clock time in ``zone`` (a skipped time moves forward by the gap)."""
    return local.replace(tzinfo=zone, fold=0).astimezone(UTC)


def wall_clock(at: datetime, zone: ZoneInfo) -> datetime:
    """A moment as the zone's wall clock shows it (naive)."""
    return at.astimezone(zone).replace(tzinfo=None)


def shown(local: datetime, zone: ZoneInfo) -> datetime:
    """The wall-clock time a reminder meant for ``local`` actually rings at (differs only in a gap)."""
    return wall_clock(moment(local, zone), zone)


def first_run(rule: Repeat, at: time, now_local: datetime, zone: ZoneInfo) -> datetime:
    """The first local date and time ``rule`` runs at ``at`` after ``now_local`` (today included)."""
    return _next(rule, at, now_local.date(), lambda local: moment(local, zone) > moment(now_local, zone))


def next_run(
    rule: Repeat, previous_local: datetime, zone: ZoneInfo, after: datetime | None = None
) -> datetime:
    """The run after ``previous_local`` (a local wall-clock time), at the same clock time, and after
    the moment ``after`` too when given (a run missed while everything was down is not repeated)."""
    start = previous_local.date() + timedelta(days=1)
    if after is None:
        return _next(rule, previous_local.time(), start, lambda local: True)
    return _next(rule, previous_local.time(), start, lambda local: moment(local, zone) > after)


def _next(rule: Repeat, at: time, start: date, check: Callable[[datetime], bool]) -> datetime:
    day = start
    for _ in range(800):  # a monthly rule on day 31 matches within 31 days; a long outage within ~2 years
        if rule.matches(day):
            local = datetime.combine(day, at)
            if check(local):
                return local
        day += timedelta(days=1)
    raise ValueError(f"rule {rule} has no run within 800 days of {start}")


def local_text(local: datetime) -> str:
    """A local wall-clock time as stored (``reminders.local_at``)."""
    return local.strftime(LOCAL_FORMAT)


def from_local_text(text: str) -> datetime:
    """``local_text`` read back."""
    return datetime.strptime(text, LOCAL_FORMAT)

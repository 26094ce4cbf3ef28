"""Timestamps as the database stores them: UTC, ``YYYY-MM-DD HH:MM:SS`` (what SQLite's datetime() emits);
event days as ``YYYY-MM-DD``.

``utcnow`` is this host's clock, for what a host records (a turn's time, a memory's creation). Leases,
due times and claims never use it: they run on the store's one clock (``memory/store/sql.py``,
``store_clock``), so gateways on hosts whose clocks disagree still agree on them. ``set_offset`` makes
this host's clock run off by a fixed amount (``gateway.clockOffset``: the ``skew`` trial of
``bench.replicas`` shows that changes nothing)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

DB_FORMAT = "%Y-%m-%d %H:%M:%S"
_offset = timedelta(0)


def set_offset(seconds: float) -> None:
    """Make ``utcnow`` run ``seconds`` ahead (negative: behind) of the machine's clock, for the process."""
    global _offset
    _offset = timedelta(seconds=seconds)


def utcnow() -> datetime:
    """Now, timezone-aware UTC (this host's clock, shifted by ``set_offset``)."""
    return datetime.now(UTC) + _offset


def to_db(moment: datetime) -> str:
    """A datetime as stored; naive datetimes are taken to be UTC."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime(DB_FORMAT)


def to_db_fine(moment: datetime) -> str:
    """``to_db`` with microseconds, for due times and leases shorter than a second (claims of background
    work, memory/store/work_claims.py); sorts as text with itself and with ``to_db``'s form."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime(DB_FORMAT + ".%f")


def from_db(text: str) -> datetime:
    """A stored timestamp (also accepts ISO forms with ``T`` or an offset) as aware UTC."""
    moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def days_between(earlier: str, now: datetime) -> float:
    """Days from a stored timestamp to ``now`` (never negative)."""
    return max(0.0, (now - from_db(earlier)).total_seconds() / 86400.0)


def day_text(value: date | str) -> str:
    """A date as stored in ``daily_events.event_date`` (YYYY-MM-DD); raises ValueError when malformed."""
    day = value.isoformat() if isinstance(value, date) else value
    date.fromisoformat(day)
    return day

"""Timestamps as the database stores them: UTC, ``YYYY-MM-DD HH:MM:SS`` (what SQLite's datetime() emits)."""

from __future__ import annotations

from datetime import UTC, datetime

DB_FORMAT = "%Y-%m-%d %H:%M:%S"


def utcnow() -> datetime:
    """Now, timezone-aware UTC."""
    return datetime.now(UTC)


def to_db(moment: datetime) -> str:
    """A datetime as stored; naive datetimes are taken to be UTC."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime(DB_FORMAT)


def from_db(text: str) -> datetime:
    """A stored timestamp (also accepts ISO forms with ``T`` or an offset) as aware UTC."""
    moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def days_between(earlier: str, now: datetime) -> float:
    """Days from a stored timestamp to ``now`` (never negative)."""
    return max(0.0, (now - from_db(earlier)).total_seconds() / 86400.0)

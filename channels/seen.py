"""What a channel has already handled: the protocol the gateway hands a channel, and an in-process stand-in.

A platform that delivers at least once (Feishu retries an unacknowledged event for hours and a
reconnecting websocket may replay) needs to recognise an update it already handled, across restarts and
across gateways sharing one database. The channel names each update by marks, (kind, key) pairs such as
("event", event id) and ("message", message id); the gateway hands it a ``SeenMarks`` kept in the memory
database (``gateway/seen_marks.py``), so channels never speak SQL (channels/README.md).

An update is new only if *none* of its marks was seen: a redelivered Feishu message can arrive under a new
event id but keeps its message id.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

Mark = tuple[str, str]  # (kind, key)
RETENTION_SECONDS = 48 * 3600  # twice the longest redelivery window anyone should need


class SeenMarks(Protocol):
    """A channel's dedup marks. ``seen_before`` asks, ``mark`` records (after the update was stored)."""

    async def seen_before(self, marks: Sequence[Mark]) -> bool: ...
    async def mark(self, marks: Sequence[Mark]) -> None: ...


@runtime_checkable
class KeepsSeenMarks(Protocol):
    """A channel that dedups by marks: the gateway calls ``use_seen_marks`` before ``start``."""

    def use_seen_marks(self, marks: SeenMarks) -> None: ...


class ProcessSeenMarks:
    """Marks kept in this process only, for a channel run without a gateway (its own tests, a script).

    Forgotten at exit: a gateway always hands the channel the database's marks instead."""

    def __init__(
        self, retention_seconds: float = RETENTION_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.retention_seconds = retention_seconds
        self._clock = clock
        self._marks: dict[Mark, float] = {}

    async def seen_before(self, marks: Sequence[Mark]) -> bool:
        """Whether any of ``marks`` was recorded within the retention."""
        cutoff = self._clock() - self.retention_seconds
        return any(self._marks.get(mark, cutoff - 1) >= cutoff for mark in marks)

    async def mark(self, marks: Sequence[Mark]) -> None:
        """Record ``marks`` now (and forget the expired ones)."""
        now = self._clock()
        cutoff = now - self.retention_seconds
        self._marks = {m: t for m, t in self._marks.items() if t >= cutoff}
        for mark in marks:
            self._marks.setdefault(mark, now)

"""The SQL of a channel's dedup marks: what each channel already handled (``gateway/seen_marks.py``).

Kept in the memory database (not a file of their own) so that SQL lives only in ``memory/store/`` and
several gateways on one PostgreSQL database share them (docs/architecture.md, "Storage"). Times are the
caller's, as stored strings (``memory/clock.to_db``).
"""

from __future__ import annotations

from collections.abc import Sequence

from memory.store.sql import SqlDatabase

Mark = tuple[str, str]  # (kind, key): ("event", "ev_1"), ("message", "om_1")


class SeenRows:
    """``seen``: what each channel already handled, as (kind, key) marks, until pruned."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db

    async def any_of(self, channel: str, marks: Sequence[Mark]) -> bool:
        """Whether any of ``marks`` was recorded for ``channel``."""
        if not marks:
            return False
        match = " OR ".join("(kind = ? AND key = ?)" for _ in marks)
        rows = await self._db.read(
            f"SELECT 1 FROM seen WHERE channel = ? AND ({match}) LIMIT 1",
            (channel, *(part for mark in marks for part in mark)),
        )
        return bool(rows)

    async def add(self, channel: str, marks: Sequence[Mark], at: str) -> None:
        """Record ``marks`` (one already there keeps its first time: two deliveries racing both succeed)."""
        if marks:
            await self._db.write_many(
                "INSERT INTO seen (channel, kind, key, seen_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                [(channel, kind, key, at) for kind, key in dict.fromkeys(marks)],
            )

    async def prune(self, before: str) -> int:
        """Forget marks recorded before ``before`` (every channel's); how many."""
        return int((await self._db.write("DELETE FROM seen WHERE seen_at < ?", (before,))).rowcount)

    async def count(self, channel: str | None = None) -> int:
        """How many marks are kept (of one channel, or all)."""
        if channel is None:
            return await self._db.scalar("SELECT COUNT(*) FROM seen")
        return await self._db.scalar("SELECT COUNT(*) FROM seen WHERE channel = ?", (channel,))

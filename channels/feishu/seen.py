"""Ids a channel has already handled, kept in SQLite so a redelivered update is answered once.

Feishu delivers events at least once: it retries an unacknowledged callback for up to ~7 hours and a
reconnecting websocket may replay. Every id is kept for 48 hours (twice the longest redelivery window
anyone should need) and survives a restart; older rows are pruned now and then.

An update is new only if *none* of its ids was seen: a redelivered Feishu message can arrive under a new
``event_id`` but keeps its ``message_id``. The check and the record are one ``INSERT OR IGNORE``, so two
concurrent deliveries of the same update cannot both count as new.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import aiosqlite

RETENTION_SECONDS = 48 * 3600
PRUNE_EVERY_SECONDS = 3600

_SCHEMA = """
CREATE TABLE IF NOT EXISTS seen_ids (
    scope   TEXT NOT NULL,
    id      TEXT NOT NULL,
    seen_at REAL NOT NULL,
    PRIMARY KEY (scope, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idx_seen_ids_seen_at ON seen_ids(seen_at);
"""


class SeenStore:
    """Seen ids of one ``scope`` (a channel name) in a shared SQLite file. Open with ``await open(...)``."""

    def __init__(
        self,
        db: aiosqlite.Connection,
        scope: str,
        *,
        retention_seconds: float = RETENTION_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = db
        self.scope = scope
        self.retention_seconds = retention_seconds
        self._clock = clock
        self._last_prune = float("-inf")

    @classmethod
    async def open(
        cls,
        path: Path,
        scope: str,
        *,
        retention_seconds: float = RETENTION_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> SeenStore:
        """Open (creating the file and table if needed) and prune rows older than the retention."""
        path.parent.mkdir(parents=True, exist_ok=True)
        db = await aiosqlite.connect(path)
        try:
            await db.execute("PRAGMA journal_mode=WAL")
            await db.execute("PRAGMA busy_timeout=5000")
            await db.executescript(_SCHEMA)
            await db.commit()
            store = cls(db, scope, retention_seconds=retention_seconds, clock=clock)
            await store.prune()
        except BaseException:
            await db.close()
            raise
        return store

    async def first_time(self, *ids: str) -> bool:
        """Record ``ids``; True when none of them had been seen (empty ids are ignored)."""
        keys = list(dict.fromkeys(i for i in ids if i))
        if not keys:
            return True
        now = self._clock()
        if now - self._last_prune >= PRUNE_EVERY_SECONDS:
            await self.prune()
        values = ", ".join("(?, ?, ?)" for _ in keys)
        params = [value for key in keys for value in (self.scope, key, now)]
        cursor = await self._db.execute(
            f"INSERT OR IGNORE INTO seen_ids(scope, id, seen_at) VALUES {values}", params
        )
        inserted = cursor.rowcount
        await cursor.close()
        await self._db.commit()
        return inserted == len(keys)

    async def seen_any(self, *ids: str) -> bool:
        """Whether any of ``ids`` was recorded (nothing is recorded: see ``first_time`` for that)."""
        keys = [i for i in ids if i]
        if not keys:
            return False
        marks = ", ".join("?" for _ in keys)
        async with self._db.execute(
            f"SELECT 1 FROM seen_ids WHERE scope = ? AND id IN ({marks}) LIMIT 1", [self.scope, *keys]
        ) as cur:
            return await cur.fetchone() is not None

    async def prune(self) -> int:
        """Delete ids older than the retention (every scope: the file is shared); returns how many."""
        now = self._clock()
        self._last_prune = now
        cursor = await self._db.execute(
            "DELETE FROM seen_ids WHERE seen_at < ?", (now - self.retention_seconds,)
        )
        deleted = cursor.rowcount
        await cursor.close()
        await self._db.commit()
        return deleted

    async def count(self) -> int:
        """How many ids of this scope are stored (for status and tests)."""
        async with self._db.execute("SELECT count(*) FROM seen_ids WHERE scope = ?", (self.scope,)) as cur:
            row = await cur.fetchone()
        return int(row[0]) if row else 0

    async def close(self) -> None:
        await self._db.close()

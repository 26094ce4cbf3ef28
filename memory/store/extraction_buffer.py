"""The SQL of the extraction buffer: turns waiting to become memories, their retries and dead letters.

A work queue: the extraction claim of an owner (``work_claims.py``) says which replica reads the owner's rows
(docs/scale-out.md, "Extraction"). Turn rows are returned as tuples in ``TURN_COLUMNS`` order. A failed
batch's retry time is the store's one clock (``sql.store_clock``), as every due time is: a replica whose
host clock is off retries it neither early nor late.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence

from memory.store import buffer_count
from memory.store.sql import Row, SqlDatabase, chunks, marks, store_clock

TURN_COLUMNS = "id, owner, channel, chat_id, sender_id, role, content, token_count, created_at, attempts"
# Most turns one batch query returns (the caller cuts them to its token budget).
BATCH_ROWS = 2000


class BufferRows:
    """Reads and writes of ``extraction_buffer``."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db
        self._now = store_clock(db.kind)  # SQL for "the store's clock, ? seconds from now"

    async def append(
        self,
        owner: str,
        channel: str,
        chat_id: str,
        sender_id: str,
        role: str,
        content: str,
        token_count: int,
        created_at: str,
    ) -> int:
        """Store one turn; returns its id. The owner's running count (``buffer_count.py``) gains its
        tokens in the same unit of work."""
        values = (owner, channel, chat_id, sender_id, role, content, token_count, created_at)
        insert = (
            "INSERT INTO extraction_buffer (owner, channel, chat_id, sender_id, role, content, token_count, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id"
        )
        count, params = buffer_count.append(owner, token_count)
        if self._db.kind == "postgresql":
            new_id = await self._db.insert(
                f"WITH counted AS ({count}), added AS ({insert}) SELECT id FROM added", (*params, *values)
            )
            return int(new_id or 0)
        async with self._unit():
            await self._db.write(count, params)
            return int(await self._db.insert(insert, values) or 0)

    @contextlib.asynccontextmanager
    async def _unit(self) -> AsyncIterator[None]:
        """The caller's transaction when one is open, else a new one: a change of the buffer and of its
        running count commit together."""
        if self._db.in_transaction():
            yield
            return
        async with self._db.transaction():
            yield

    async def oldest(self, owner: str, *, due_only: bool) -> list[Row]:
        """The owner's oldest live turns (``TURN_COLUMNS``); ``due_only``: not those still waiting out a
        retry (their retry time is after the store's now)."""
        where = "owner = ? AND dead = 0"
        params: list[object] = [owner]
        if due_only:
            where += f" AND (next_attempt_at IS NULL OR next_attempt_at <= {self._now})"
            params.append(0.0)
        return await self._db.read(
            f"SELECT {TURN_COLUMNS} FROM extraction_buffer WHERE {where} ORDER BY id LIMIT {BATCH_ROWS}",
            params,
        )

    async def backlog(self, owner: str | None) -> list[tuple[str, str, str | None, int, int]]:
        """Per owner with live turns: (owner, newest turn, latest retry time, tokens, turns)."""
        cond, params = ("AND owner = ?", (owner,)) if owner is not None else ("", ())
        rows = await self._db.read(
            "SELECT owner, MAX(created_at), MAX(next_attempt_at), SUM(token_count), COUNT(*) "
            f"FROM extraction_buffer WHERE dead = 0 {cond} GROUP BY owner ORDER BY owner",
            params,
        )
        return [(r[0], r[1], r[2], int(r[3] or 0), int(r[4])) for r in rows]

    async def pending_tokens(self, owner: str) -> int:
        """Estimated tokens of the owner's live turns."""
        return await self._db.scalar(
            "SELECT COALESCE(SUM(token_count), 0) FROM extraction_buffer WHERE owner = ? AND dead = 0",
            (owner,),
        )

    async def remove(self, ids: Sequence[int]) -> int:
        """Drop turns whose extraction has been written; returns how many were still there. Their owners'
        running counts lose the live ones' tokens in the same unit of work."""
        removed = 0
        async with self._unit():
            for chunk in chunks(list(ids), 250):  # ``less`` binds each id twice
                await self._db.write(*buffer_count.less(chunk))
                cur = await self._db.write(
                    f"DELETE FROM extraction_buffer WHERE id IN ({marks(chunk)})", chunk
                )
                removed += int(cur.rowcount)
        return removed

    async def attempts(self, ids: Sequence[int]) -> int:
        """The most failed attempts any of ``ids`` has had."""
        return await self._db.scalar(
            f"SELECT MAX(attempts) FROM extraction_buffer WHERE id IN ({marks(ids)})", ids
        )

    async def mark_failed(
        self, ids: Sequence[int], attempts: int, retry_in_s: float, dead: bool, error: str
    ) -> None:
        """Record a failed attempt: its count, the next try (``retry_in_s`` seconds from the store's now),
        whether the turns are now dead letters (their owners' running counts lose them)."""
        async with self._unit():
            if dead:
                await self._db.write(*buffer_count.less(list(ids)))
            await self._db.write(
                f"UPDATE extraction_buffer SET attempts = ?, next_attempt_at = {self._now}, dead = ?, "
                f"last_error = ? WHERE id IN ({marks(ids)})",
                (attempts, retry_in_s, int(dead), error, *ids),
            )

    async def count(self, owner: str | None = None, *, dead: bool | None = None) -> int:
        """Buffered turns (of one owner or all; only dead letters, or only live ones, when ``dead`` says)."""
        where: list[str] = []
        params: list[object] = []
        if owner is not None:
            where.append("owner = ?")
            params.append(owner)
        if dead is not None:
            where.append("dead = ?")
            params.append(int(dead))
        cond = f"WHERE {' AND '.join(where)}" if where else ""
        return await self._db.scalar(f"SELECT COUNT(*) FROM extraction_buffer {cond}", params)

    async def requeue_dead(self, owner: str | None) -> int:
        """Give dead letters a fresh start (attempts 0, due now); returns how many. Their owners' running
        counts gain them (an owner with no due time gets one, now)."""
        cond, params = ("AND owner = ?", (owner,)) if owner is not None else ("", ())
        async with self._unit():
            await self._db.write(*buffer_count.requeue(self._now, owner))
            cur = await self._db.write(
                "UPDATE extraction_buffer SET dead = 0, attempts = 0, next_attempt_at = NULL "
                f"WHERE dead = 1 {cond}",
                params,
            )
        return int(cur.rowcount)

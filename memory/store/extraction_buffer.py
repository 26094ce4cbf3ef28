"""The SQL of the extraction buffer: turns waiting to become memories, their retries and dead letters.

The buffer is not a table of its own: it is each owner's kept turns after its watermark, and the turns
behind it that have a failure row (``turn_watermark.py``; docs/scale-out.md, "One table for the turn
text"). A work queue all the same: the extraction claim of an owner (``work_claims.py``) says which replica
reads the owner's turns (docs/scale-out.md, "Extraction"). Turn rows are returned as tuples in
``TURN_COLUMNS`` order. A failed batch's retry time is the store's one clock (``sql.store_clock``), as
every due time is: a replica whose host clock is off retries it neither early nor late.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence

from memory.store import buffer_count
from memory.store.sql import Row, SqlDatabase, chunks, marks, store_clock
from memory.store.turn_watermark import IDLE, pending

TURN_COLUMNS = "id, owner, channel, chat_id, sender_id, role, content, token_count, created_at, attempts"
# Most turns one batch query returns (the caller cuts them to its token budget).
BATCH_ROWS = 2000


class BufferRows:
    """Reads and writes of the buffered turns (``conversation_turns`` past the watermarks,
    ``extraction_failures``)."""

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
        """Keep one turn for extraction (its words as its index text); returns its id. The owner's row
        is locked (made, idle, with the watermark at its newest turn, when missing) and its running count
        (``buffer_count.py``) gains the turn's tokens before the turn's id is drawn, in one unit of work."""
        async with self._unit():
            await self._db.write(
                f"INSERT INTO extraction_due (owner, due_at, live_tokens, extracted_through) "
                f"SELECT ?, '{IDLE}', ?, COALESCE(MAX(id), 0) FROM conversation_turns WHERE owner = ? "
                "ON CONFLICT(owner) DO UPDATE SET "
                "live_tokens = extraction_due.live_tokens + excluded.live_tokens",
                (owner, token_count, owner),
            )
            new_id = await self._db.insert(
                "INSERT INTO conversation_turns (owner, channel, chat_id, role, content, search_text, "
                "created_at, sender_id, token_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (owner, channel, chat_id, role, content, content, created_at, sender_id, token_count),
            )
        return int(new_id or 0)

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
        where = "dead = 0"
        params: list[object] = [owner, owner]
        if due_only:
            where += f" AND (next_attempt_at IS NULL OR next_attempt_at <= {self._now})"
            params.append(0.0)
        return await self._db.read(
            f"SELECT {TURN_COLUMNS} FROM {pending(True)} WHERE {where} ORDER BY id LIMIT {BATCH_ROWS}",
            params,
        )

    async def backlog(self, owner: str | None) -> list[tuple[str, str, str | None, int, int]]:
        """Per owner with live turns: (owner, newest turn, latest retry time, tokens, turns)."""
        rows = await self._db.read(
            "SELECT owner, MAX(created_at), MAX(next_attempt_at), SUM(token_count), COUNT(*) "
            f"FROM {pending(owner is not None)} WHERE dead = 0 GROUP BY owner ORDER BY owner",
            (owner, owner) if owner is not None else (),
        )
        return [(r[0], r[1], r[2], int(r[3] or 0), int(r[4])) for r in rows]

    async def pending_tokens(self, owner: str) -> int:
        """Estimated tokens of the owner's live turns."""
        return await self._db.scalar(
            f"SELECT COALESCE(SUM(token_count), 0) FROM {pending(True)} WHERE dead = 0", (owner, owner)
        )

    async def remove(self, ids: Sequence[int]) -> int:
        """Take turns whose extraction is being written (in its transaction); returns how many were still
        buffered. A straggler is taken by deleting its failure row; the tail by moving the owner's
        watermark past them with a compare-and-set on the watermark read here (after the fence locked the
        row on PostgreSQL) — a run that took them first moved it, and the count comes out short. The
        owners' running counts lose the live ones' tokens in the same unit of work."""
        taken = 0
        async with self._unit():
            for chunk in chunks(list(ids), 250):
                taken += await self._take(chunk)
        return taken

    async def _take(self, ids: Sequence[int]) -> int:
        """``remove`` for at most 250 ids: the stragglers, then each owner's tail; the running counts lose
        the tokens of the live turns taken."""
        rows = await self._db.read(
            "SELECT t.id, t.owner, d.extracted_through, f.turn_id, COALESCE(f.dead, 0), t.token_count "
            "FROM conversation_turns t LEFT JOIN extraction_due d ON d.owner = t.owner "
            f"LEFT JOIN extraction_failures f ON f.turn_id = t.id WHERE t.id IN ({marks(ids)})",
            list(ids),
        )
        tails: dict[tuple[str, int], list[int]] = {}
        stragglers: list[int] = []
        live: dict[int, tuple[str, int]] = {}  # turn id -> (owner, tokens) of the live ones
        for turn_id, owner, mark, failed, dead, tokens in rows:
            if not dead:
                live[int(turn_id)] = (str(owner), int(tokens))
            if mark is not None and int(turn_id) > int(mark):
                tails.setdefault((str(owner), int(mark)), []).append(int(turn_id))
            elif failed is not None:
                stragglers.append(int(turn_id))
        taken: list[int] = []
        if stragglers:
            gone = await self._db.returning(
                f"DELETE FROM extraction_failures WHERE turn_id IN ({marks(stragglers)}) RETURNING turn_id",
                stragglers,
            )
            taken += [int(r[0]) for r in gone]
        for (owner, mark), tail in tails.items():
            cur = await self._db.write(
                "UPDATE extraction_due SET extracted_through = ? WHERE owner = ? AND extracted_through = ?",
                (max(tail), owner, mark),
            )
            if cur.rowcount:
                taken += tail
                done = f"DELETE FROM extraction_failures WHERE turn_id IN ({marks(tail)})"
                await self._db.write(done, tail)
        less: dict[str, int] = {}
        for turn_id in taken:
            if turn_id in live:
                owner, tokens = live[turn_id]
                less[owner] = less.get(owner, 0) + tokens
        for owner, tokens in less.items():
            await self._db.write(*buffer_count.append(owner, -tokens))
        return len(taken)

    async def attempts(self, ids: Sequence[int]) -> int:
        """The most failed attempts any of ``ids`` has had."""
        return await self._db.scalar(
            f"SELECT COALESCE(MAX(attempts), 0) FROM extraction_failures WHERE turn_id IN ({marks(ids)})",
            ids,
        )

    async def mark_failed(
        self, ids: Sequence[int], attempts: int, retry_in_s: float, dead: bool, error: str
    ) -> None:
        """Record a failed attempt on each turn's failure row (made here: the only write of the table
        outside a re-queue): its count, the next try (``retry_in_s`` seconds from the store's now),
        whether the turns are now dead letters (their owners' running counts lose them)."""
        async with self._unit():
            if dead:
                await self._db.write(*buffer_count.less(list(ids)))
            await self._db.write(
                "INSERT INTO extraction_failures "
                "(turn_id, owner, attempts, next_attempt_at, dead, last_error) "
                f"SELECT id, owner, ?, {self._now}, ?, ? FROM conversation_turns WHERE id IN ({marks(ids)}) "
                "ON CONFLICT(turn_id) DO UPDATE SET attempts = excluded.attempts, "
                "next_attempt_at = excluded.next_attempt_at, dead = excluded.dead, "
                "last_error = excluded.last_error",
                (attempts, retry_in_s, int(dead), error, *ids),
            )

    async def count(self, owner: str | None = None, *, dead: bool | None = None) -> int:
        """Buffered turns (of one owner or all; only dead letters, or only live ones, when ``dead`` says)."""
        cond, params = ("WHERE dead = ?", [int(dead)]) if dead is not None else ("", [])
        ours = [owner, owner] if owner is not None else []
        return await self._db.scalar(
            f"SELECT COUNT(*) FROM {pending(owner is not None)} {cond}", [*ours, *params]
        )

    async def requeue_dead(self, owner: str | None) -> int:
        """Give dead letters a fresh start (attempts 0, due now); returns how many. Their owners' running
        counts gain them (an owner with no due time gets one, now)."""
        cond, params = ("AND owner = ?", (owner,)) if owner is not None else ("", ())
        async with self._unit():
            await self._db.write(*buffer_count.requeue(self._now, owner))
            cur = await self._db.write(
                "UPDATE extraction_failures SET dead = 0, attempts = 0, next_attempt_at = NULL "
                f"WHERE dead = 1 {cond}",
                params,
            )
        return int(cur.rowcount)

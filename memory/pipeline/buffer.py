"""The extraction buffer: every user message and reply waits here, in SQLite, until extraction succeeds.

Rows leave the buffer only after their facts and summary are written, so a crash, a restart or a failing
memory model never loses a turn. A batch that fails is retried with exponential backoff; after
``max_attempts`` failures its rows become dead letters (``dead = 1``): kept, counted by ``tierclaw status``,
re-queued by ``tierclaw memory retry``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from memory.clock import to_db, utcnow
from memory.engine import MemoryEngine
from memory.text.token_count import estimate_tokens

log = logging.getLogger("tierclaw.memory")

# Longest wait between two retries of a failing batch.
MAX_BACKOFF_SECONDS = 3600.0

_TURN_COLUMNS = "id, owner, channel, chat_id, sender_id, role, content, token_count, created_at, attempts"


@dataclass(slots=True)
class BufferedTurn:
    """One buffered message."""

    id: int
    owner: str
    channel: str
    chat_id: str
    sender_id: str
    role: str
    content: str
    token_count: int
    created_at: str
    attempts: int


@dataclass(slots=True)
class OwnerBacklog:
    """What an owner has waiting: newest turn time, earliest allowed retry, and estimated tokens."""

    owner: str
    last_created_at: str
    next_attempt_at: str | None
    tokens: int
    turns: int


class ExtractionBuffer:
    """Buffered turns per owner on the engine's connection (writes hold the engine's write lock)."""

    def __init__(self, engine: MemoryEngine) -> None:
        self._engine = engine

    async def append(
        self,
        owner: str,
        *,
        channel: str,
        chat_id: str,
        sender_id: str,
        role: str,
        content: str,
        now: datetime | None = None,
    ) -> int:
        """Store one message; returns its buffer id."""
        if role not in ("user", "assistant"):
            raise ValueError(f"role must be 'user' or 'assistant', got {role!r}")
        return await self._engine.execute_write(
            "INSERT INTO extraction_buffer (owner, channel, chat_id, sender_id, role, content, token_count, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                owner,
                channel,
                chat_id,
                sender_id,
                role,
                content,
                estimate_tokens(content),
                to_db(now or utcnow()),
            ),
        )

    async def batch(
        self, owner: str, token_budget: int, *, now: datetime | None = None, ignore_backoff: bool = False
    ) -> list[BufferedTurn]:
        """The owner's oldest live turns up to ``token_budget`` estimated tokens (always at least one).

        Turns still waiting out a retry backoff are left alone unless ``ignore_backoff``.
        """
        where = "owner = ? AND dead = 0"
        params: list[object] = [owner]
        if not ignore_backoff:
            where += " AND (next_attempt_at IS NULL OR next_attempt_at <= ?)"
            params.append(to_db(now or utcnow()))
        rows = await self._engine.fetchall(
            f"SELECT {_TURN_COLUMNS} FROM extraction_buffer WHERE {where} ORDER BY id LIMIT 2000", params
        )
        out: list[BufferedTurn] = []
        used = 0
        for row in rows:
            turn = BufferedTurn(*row)
            if out and used + turn.token_count > token_budget:
                break
            out.append(turn)
            used += turn.token_count
        return out

    async def backlog(self, owner: str | None = None) -> list[OwnerBacklog]:
        """Per owner with live (not dead) turns: newest turn, retry time, tokens and turn count."""
        cond, params = ("AND owner = ?", (owner,)) if owner is not None else ("", ())
        rows = await self._engine.fetchall(
            "SELECT owner, MAX(created_at), MAX(next_attempt_at), SUM(token_count), COUNT(*) "
            f"FROM extraction_buffer WHERE dead = 0 {cond} GROUP BY owner ORDER BY owner",
            params,
        )
        return [OwnerBacklog(r[0], r[1], r[2], int(r[3] or 0), int(r[4])) for r in rows]

    async def pending_tokens(self, owner: str) -> int:
        """Estimated tokens of the owner's live buffered turns."""
        rows = await self._engine.fetchall(
            "SELECT COALESCE(SUM(token_count), 0) FROM extraction_buffer WHERE owner = ? AND dead = 0",
            (owner,),
        )
        return int(rows[0][0])

    async def remove(self, ids: list[int]) -> None:
        """Drop turns whose extraction has been written."""
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            await self._engine.execute_write(
                f"DELETE FROM extraction_buffer WHERE id IN ({','.join('?' * len(chunk))})", chunk
            )

    async def record_failure(
        self,
        ids: list[int],
        error: str,
        *,
        max_attempts: int,
        backoff_seconds: float,
        now: datetime | None = None,
    ) -> tuple[bool, datetime]:
        """Count one failed attempt for a batch; returns (became dead letters, next attempt time)."""
        now = now or utcnow()
        rows = await self._engine.fetchall(
            f"SELECT MAX(attempts) FROM extraction_buffer WHERE id IN ({','.join('?' * len(ids))})", ids
        )
        attempts = int(rows[0][0] or 0) + 1
        delay = min(MAX_BACKOFF_SECONDS, backoff_seconds * (2 ** (attempts - 1)))
        next_at = now + timedelta(seconds=delay)
        dead = attempts >= max_attempts
        marks = ",".join("?" * len(ids))
        await self._engine.execute_write(
            f"UPDATE extraction_buffer SET attempts = ?, next_attempt_at = ?, dead = ?, last_error = ? "
            f"WHERE id IN ({marks})",
            (attempts, to_db(next_at), int(dead), error[:500], *ids),
        )
        return dead, next_at

    async def dead_letters(self, owner: str | None = None) -> int:
        """How many turns gave up after too many failed extractions."""
        cond, params = ("AND owner = ?", (owner,)) if owner is not None else ("", ())
        rows = await self._engine.fetchall(
            f"SELECT COUNT(*) FROM extraction_buffer WHERE dead = 1 {cond}", params
        )
        return int(rows[0][0])

    async def requeue_dead(self, owner: str | None = None) -> int:
        """Give dead letters a fresh start (attempts 0, due now); returns how many were re-queued."""
        cond, params = ("AND owner = ?", (owner,)) if owner is not None else ("", ())
        count = await self._engine.execute_write(
            "UPDATE extraction_buffer SET dead = 0, attempts = 0, next_attempt_at = NULL "
            f"WHERE dead = 1 {cond}",
            params,
        )
        if count:
            log.info("[memory] re-queued %d dead-letter turns", count)
        return count

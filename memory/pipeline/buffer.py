"""The extraction buffer: every user message and reply waits here until extraction succeeds.

The buffer is the owner's kept turns (``conversation_turns``) after its watermark, plus turns behind it
with a failure row (``memory/store/turn_watermark.py``): a turn's text is stored once. Turns leave the
buffer only in the transaction that writes their facts and summary, so a crash, a restart or a failing
memory model never loses a turn. A batch that fails is retried with exponential backoff; after
``max_attempts`` failures its rows become dead letters (``dead = 1``): kept, counted by ``tierclaw status``,
re-queued by ``tierclaw memory retry``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from memory.clock import to_db, utcnow
from memory.store.protocol import BufferRowsAPI
from memory.text.token_count import estimate_tokens

log = logging.getLogger("tierclaw.memory")

# Longest wait between two retries of a failing batch.
MAX_BACKOFF_SECONDS = 3600.0


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
    """Buffered turns per owner, kept by the store (``memory/store/extraction_buffer.py``)."""

    def __init__(self, rows: BufferRowsAPI) -> None:
        self._rows = rows  # the store's ``buffer``, handed over where the runtime is wired

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
        """Keep one message for extraction (a kept turn); returns its turn id."""
        if role not in ("user", "assistant"):
            raise ValueError(f"role must be 'user' or 'assistant', got {role!r}")
        return await self._rows.append(
            owner,
            channel,
            chat_id,
            sender_id,
            role,
            content,
            estimate_tokens(content),
            to_db(now or utcnow()),
        )

    async def batch(
        self, owner: str, token_budget: int, *, ignore_backoff: bool = False
    ) -> list[BufferedTurn]:
        """The owner's oldest live turns up to ``token_budget`` estimated tokens (always at least one).

        Turns still waiting out a retry backoff (by the store's clock) are left alone unless
        ``ignore_backoff``.
        """
        out: list[BufferedTurn] = []
        used = 0
        for row in await self._rows.oldest(owner, due_only=not ignore_backoff):
            turn = BufferedTurn(*row)
            if out and used + turn.token_count > token_budget:
                break
            out.append(turn)
            used += turn.token_count
        return out

    async def backlog(self, owner: str | None = None) -> list[OwnerBacklog]:
        """Per owner with live (not dead) turns: newest turn, retry time, tokens and turn count."""
        return [OwnerBacklog(*row) for row in await self._rows.backlog(owner)]

    async def pending_tokens(self, owner: str) -> int:
        """Estimated tokens of the owner's live buffered turns."""
        return await self._rows.pending_tokens(owner)

    async def pending_turns(self, owner: str | None = None) -> int:
        """Live (not dead) buffered turns of one owner, or of everyone."""
        return sum(item.turns for item in await self.backlog(owner))

    async def remove(self, ids: list[int]) -> int:
        """Drop turns whose extraction has been written; returns how many were still buffered."""
        return await self._rows.remove(ids)

    async def record_failure(
        self,
        ids: list[int],
        error: str,
        *,
        max_attempts: int,
        backoff_seconds: float,
        clock: Callable[[], datetime] = utcnow,
    ) -> tuple[bool, datetime]:
        """Count one failed attempt for a batch; returns (became dead letters, next attempt time by
        ``clock``). The stored retry time is the delay from the store's clock
        (``memory/store/extraction_buffer.py``); ``clock`` is read after that write, so the time returned
        is never before the stored one — an owner due at it finds its turns due, where a reading taken
        before the write (seconds earlier on a busy machine) made the owner due while its turns still
        waited, and the replica that claimed it then put it off by a whole quiet gap."""
        attempts = await self._rows.attempts(ids) + 1
        delay = min(MAX_BACKOFF_SECONDS, backoff_seconds * (2 ** (attempts - 1)))
        dead = attempts >= max_attempts
        await self._rows.mark_failed(ids, attempts, delay, dead, error[:500])
        return dead, clock() + timedelta(seconds=delay)

    async def dead_letters(self, owner: str | None = None) -> int:
        """How many turns gave up after too many failed extractions."""
        return await self._rows.count(owner, dead=True)

    async def requeue_dead(self, owner: str | None = None) -> int:
        """Give dead letters a fresh start (attempts 0, due now); returns how many were re-queued."""
        count = await self._rows.requeue_dead(owner)
        if count:
            log.info("[memory] re-queued %d dead-letter turns", count)
        return count

"""The SQL of one exchange of a conversation written at once: the person's words and the reply go to the
chat's Tier 0 session (``session_messages``), the searchable conversation tier (``conversation_turns``)
and the extraction buffer (``extraction_buffer``), and the owner's extraction due time is pushed
(``extraction_due``) — in one unit of work, after the model answered (issue 38, item 5).

Until then the message's unanswered inbox row is its durable record (``inbox.py``): a process killed
before this write leaves nothing of the exchange written, and the message is answered (and written) once
after the restart. On PostgreSQL the four writes are one statement (data-modifying ``WITH`` parts: one
round trip, one commit); on SQLite, whose ``WITH`` cannot write, the same parts run in one transaction
(docs/scale-out.md, "Scale on paper").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memory.store.chat_holds import SendIntent, fence_sql
from memory.store.sql import SqlDatabase, store_clock


@dataclass(frozen=True, slots=True)
class ExchangeTurn:
    """One turn of an exchange as it is kept: ``sender_id`` is the person's for their words, "" for the
    reply; ``search_text`` and ``token_count`` are computed by the caller (the conversation tier's index
    text, the buffer's token estimate)."""

    role: str
    content: str
    sender_id: str
    search_text: str
    token_count: int


@dataclass(frozen=True, slots=True)
class Exchange:
    """Where an exchange goes: the chat, its session, its owner, and when it was said."""

    owner: str
    channel: str
    chat_id: str
    chat_key: str
    session: int
    created_at: str
    turns: Sequence[ExchangeTurn]
    keep: bool = True  # False (memory off): the session alone — no conversation tier, no extraction
    intent: SendIntent | None = None  # the reply's send intent, recorded with the exchange when it may be


class ExchangeRows:
    """Writes an exchange in its four places at once; ``turns_written`` is told after each write that
    added conversation turns (the PostgreSQL ranking re-reads its table size)."""

    def __init__(self, db: SqlDatabase, turns_written: Callable[[], None] = lambda: None) -> None:
        self._db = db
        self._now = store_clock(db.kind)
        self._turns_written = turns_written

    async def write(self, exchange: Exchange, *, token_budget: int, quiet_gap_s: float) -> bool:
        """Keep ``exchange``; True when the owner's buffered tokens reached ``token_budget`` (extraction is
        due now), False when it is due ``quiet_gap_s`` from now (or nothing was buffered)."""
        if not exchange.turns:
            return False
        parts = self._parts(exchange)
        due = self._due(exchange, token_budget, quiet_gap_s) if exchange.keep else None
        intent = exchange.intent
        asked = time.monotonic()
        if self._db.kind == "postgresql":
            hit, fenced = await self._one_statement(parts, due, intent)
        else:
            async with self._db.transaction():
                for sql, params in parts:
                    await self._db.write(sql, params)
                rows = await self._db.returning(*due) if due else []
                hit = bool(rows and rows[0][0])
                fenced = bool(intent and await self._db.returning(fence_sql(self._now), intent.params()))
        if intent is not None and fenced:
            intent.asked_at = asked
        if exchange.keep:
            self._turns_written()
        return hit

    async def _one_statement(
        self,
        parts: list[tuple[str, list[object]]],
        due: tuple[str, list[object]] | None,
        intent: SendIntent | None,
    ) -> tuple[bool, bool]:
        """PostgreSQL: every insert, the due-time push and the send intent ``WITH`` parts of one statement
        (memory off and no intent: the one insert). (extraction is due now, the intent was recorded)."""
        if due is None and intent is None:
            await self._db.write(*parts[0])
            return False, False
        params: list[object] = []
        for _, part_params in parts:
            params += part_params
        with_parts = [f"w{n} AS ({sql})" for n, (sql, _) in enumerate(parts)]
        if due is not None:
            with_parts.append(f"due AS ({due[0]})")
            params += due[1]
        if intent is not None:
            with_parts.append(f"intent AS ({fence_sql(self._now)})")
            params += intent.params()
        hit = "(SELECT * FROM due)" if due is not None else "0"
        fenced = "(SELECT COUNT(*) FROM intent)" if intent is not None else "0"
        rows = await self._db.returning(f"WITH {', '.join(with_parts)} SELECT {hit}, {fenced}", params)
        return bool(rows and rows[0][0]), bool(rows and rows[0][1])

    def _parts(self, e: Exchange) -> list[tuple[str, list[object]]]:
        """The inserts, each one statement over every turn of the exchange."""
        n = len(e.turns)
        parts: list[tuple[str, list[object]]] = [
            (
                "INSERT INTO session_messages (chat_key, session_no, role, content, created_at) VALUES "
                + _rows(5, n),
                [v for t in e.turns for v in (e.chat_key, e.session, t.role, t.content, e.created_at)],
            )
        ]
        if e.keep:
            turns: list[object] = [
                v
                for t in e.turns
                for v in (e.owner, e.channel, e.chat_id, t.role, t.content, t.search_text, e.created_at)
            ]
            buffered: list[object] = [
                v for t in e.turns for v in (e.owner, e.channel, e.chat_id, t.sender_id, *_buffered(t, e))
            ]
            parts.append(
                (
                    "INSERT INTO conversation_turns (owner, channel, chat_id, role, content, search_text, "
                    "created_at) VALUES " + _rows(7, n),
                    turns,
                )
            )
            parts.append(
                (
                    "INSERT INTO extraction_buffer (owner, channel, chat_id, sender_id, role, content, "
                    "token_count, created_at) VALUES " + _rows(8, n),
                    buffered,
                )
            )
        return parts

    def _due(self, e: Exchange, token_budget: int, quiet_gap_s: float) -> tuple[str, list[object]]:
        """The owner's due time after the exchange: now when the live buffered tokens — this exchange's
        included — reached ``token_budget``, else ``quiet_gap_s`` from now; a claim on the row stays (as
        ``work_claims.ExtractionDueRows.push``). On PostgreSQL the sum cannot see the rows the same
        statement inserts, so their tokens are added to it; on SQLite they are inserted already."""
        now = self._now
        added = sum(t.token_count for t in e.turns) if self._db.kind == "postgresql" else 0
        return (
            "INSERT INTO extraction_due (owner, due_at) "
            f"SELECT ?, CASE WHEN COALESCE(SUM(token_count), 0) + ? >= ? THEN {now} ELSE {now} END "
            "FROM extraction_buffer WHERE owner = ? AND dead = 0 "
            "ON CONFLICT(owner) DO UPDATE SET due_at = excluded.due_at "
            f"RETURNING CASE WHEN due_at <= {now} THEN 1 ELSE 0 END",
            [e.owner, added, token_budget, 0.0, quiet_gap_s, e.owner, 0.0],
        )


def _buffered(t: ExchangeTurn, e: Exchange) -> tuple[object, ...]:
    """The buffer row's values after the chat's and the sender's."""
    return (t.role, t.content, t.token_count, e.created_at)


def _rows(width: int, n: int) -> str:
    """``(?, …), (?, …)``: ``n`` rows of ``width`` values."""
    one = "(" + ", ".join("?" * width) + ")"
    return ", ".join([one] * n)

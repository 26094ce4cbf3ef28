"""The SQL of one exchange of a conversation written at once: the person's words and the reply go to the
searchable conversation tier (``conversation_turns``), which is also the chat's Tier 0 session (the turns
carry its number: ``turn_sessions.py``) and the extraction buffer (the owner's turns past its watermark,
``turn_watermark.py``), and the owner's extraction due time is pushed (``extraction_due``) — in one unit
of work, after the reply went out (issue 38, item 5). With memory off the words go to the session's own
table (``session_messages``) alone.

Until then the message's unanswered inbox row is its durable record (``inbox.py``): a process killed
before this write leaves nothing of the exchange written, and the message is answered (and written) once
after the restart. The parts (``ExchangeWrite``, ``ExchangeRows.prepare``) run alone (``write``: a message
with no inbox row, or one whose exchange had to be written before its reply went out) or with the
message's answered-mark and the chat's next claim (``chat_holds.ChatHoldRows.answered_then_next``): on
PostgreSQL data-modifying ``WITH`` parts of one statement (one round trip, one commit); on SQLite, whose
``WITH`` cannot write, the same parts in one transaction (docs/scale-out.md, "Two commits").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from memory.store import buffer_count
from memory.store.sql import SqlDatabase, store_clock

Part = tuple[str, list[object]]  # one statement (or ``WITH`` part) and its parameters


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
    keep: bool = True  # False (memory off): the session table alone — no conversation tier, no extraction


@dataclass(frozen=True, slots=True)
class ExchangeWrite:
    """An exchange's statements, ready to run (``ExchangeRows.prepare``): the inserts, the due-time push
    (None: memory off), and what the chat's next claim must add to the history it reads when they run in
    its statement (which cannot see its own inserts): the session and the turns as (role, content)."""

    parts: list[Part]
    due: Part | None
    chat_key: str
    session: int
    said: list[tuple[str, str]] = field(default_factory=list)
    kept: bool = True  # the insert is of conversation turns (False: of the session table, memory off)

    @property
    def statements(self) -> list[Part]:
        """Every part in order, the due-time push first: it locks the owner's row before the turns' ids
        are drawn (``turn_watermark.py``)."""
        return [*([self.due] if self.due else []), *self.parts]


class ExchangeRows:
    """Writes an exchange's turns and its due-time push at once; ``turns_written`` is told after each
    write that added conversation turns (the PostgreSQL ranking re-reads its table size)."""

    def __init__(self, db: SqlDatabase, turns_written: Callable[[], None] = lambda: None) -> None:
        self._db = db
        self._now = store_clock(db.kind)
        self._turns_written = turns_written

    def prepare(self, exchange: Exchange, *, token_budget: int, quiet_gap_s: float) -> ExchangeWrite:
        """The statements of ``exchange`` (its turns must not be empty)."""
        due = self._due(exchange, token_budget, quiet_gap_s) if exchange.keep else None
        said = [(t.role, t.content) for t in exchange.turns]
        return ExchangeWrite(
            self._parts(exchange), due, exchange.chat_key, exchange.session, said, exchange.keep
        )

    def written(self, write: ExchangeWrite) -> None:
        """``write`` ran (here or with an answered-mark): the ranking's table size is read again."""
        if write.kept:
            self._turns_written()

    async def write(self, exchange: Exchange, *, token_budget: int, quiet_gap_s: float) -> bool:
        """Keep ``exchange`` now; True when the owner's buffered tokens reached ``token_budget`` (extraction
        is due now), False when it is due ``quiet_gap_s`` from now (or nothing was buffered)."""
        if not exchange.turns:
            return False
        return await self.run(self.prepare(exchange, token_budget=token_budget, quiet_gap_s=quiet_gap_s))

    async def run(self, prepared: ExchangeWrite) -> bool:
        """Write ``prepared`` now, alone; whether extraction is due now."""
        if self._db.kind == "postgresql":
            hit = await self._one_statement(prepared)
        else:
            async with self._db.transaction():
                hit = await run_in_transaction(self._db, prepared)
        self.written(prepared)
        return hit

    async def _one_statement(self, prepared: ExchangeWrite) -> bool:
        """PostgreSQL: every insert and the due-time push ``WITH`` parts of one statement (memory off: the
        one insert). Whether extraction is due now."""
        if prepared.due is None:
            await self._db.write(*prepared.parts[0])
            return False
        parts, params = with_parts(prepared)
        rows = await self._db.returning(f"WITH {parts} SELECT (SELECT * FROM due)", params)
        return bool(rows and rows[0][0])

    def _parts(self, e: Exchange) -> list[Part]:
        """The insert, one statement over every turn of the exchange: the kept turns with the chat's
        session number (``turn_sessions.py``), or — memory off — the session table's rows."""
        n = len(e.turns)
        if not e.keep:
            return [
                (
                    "INSERT INTO session_messages (chat_key, session_no, role, content, created_at) VALUES "
                    + _rows(5, n),
                    [v for t in e.turns for v in (e.chat_key, e.session, t.role, t.content, e.created_at)],
                )
            ]
        turns: list[object] = [
            v
            for t in e.turns
            for v in (
                e.owner,
                e.channel,
                e.chat_id,
                t.role,
                t.content,
                t.search_text,
                e.created_at,
                t.sender_id,
                t.token_count,
                e.session,
            )
        ]
        return [
            (
                "INSERT INTO conversation_turns (owner, channel, chat_id, role, content, search_text, "
                "created_at, sender_id, token_count, session_no) VALUES " + _rows(10, n),
                turns,
            )
        ]

    def _due(self, e: Exchange, token_budget: int, quiet_gap_s: float) -> Part:
        """The owner's due time after the exchange: now when the owner's running count of live buffered
        tokens (``buffer_count.py``) — this exchange's added to it in the same statement — reached
        ``token_budget``, else ``quiet_gap_s`` from now; a claim on the row stays (as
        ``work_claims.ExtractionDueRows.push``). One row read, whatever the size of the buffer."""
        added = sum(t.token_count for t in e.turns)
        sql, params = buffer_count.push(self._now, e.owner, added, token_budget, quiet_gap_s)
        return sql, params


def with_parts(prepared: ExchangeWrite, only_if: str = "") -> tuple[str, list[object]]:
    """PostgreSQL: ``prepared`` as ``WITH`` parts (the due-time push ``due``: one column, 1 when extraction
    is due now; ``w0``, ``w1``, …) and their parameters, for one statement. The turns' insert reads
    ``due`` (it inserts only when the push returned its row), so the push — and the owner's row lock —
    comes before the turns' ids are drawn (``turn_watermark.py``). ``only_if``: the name of an earlier
    ``WITH`` part; every insert and the push write only when it returned a row (the answered-mark made
    by this statement: ``chat_holds.answered_then_next``), else nothing (``due`` then yields no row)."""
    names = (["due"] if prepared.due else []) + [f"w{n}" for n in range(len(prepared.parts))]
    statements = [_conditional(sql, only_if) for sql, _ in prepared.statements]
    sql = ", ".join(f"{name} AS ({part})" for name, part in zip(names, statements, strict=True))
    return sql, [value for _, params in prepared.statements for value in params]


def _conditional(sql: str, only_if: str) -> str:
    """One of ``ExchangeRows``'s statements as a ``WITH`` part: the turns' insert after the due-time push
    (``due``), and — with ``only_if`` — every part conditional on that part having rows. An ``INSERT …
    VALUES`` becomes ``INSERT … SELECT * FROM (VALUES …) WHERE``, the due-time push (a ``SELECT``) gets
    its ``WHERE``. Every column the values go to is text or an integer, so the values' types need no
    casts."""
    if sql.startswith("INSERT INTO extraction_due "):
        when = f"WHERE EXISTS (SELECT 1 FROM {only_if})"
        return sql.replace(buffer_count.ALWAYS, when, 1) if only_if else sql
    if sql.startswith("INSERT INTO conversation_turns "):
        when = "EXISTS (SELECT 1 FROM due)"
    elif only_if:
        when = f"EXISTS (SELECT 1 FROM {only_if})"
    else:
        return sql
    head, values = sql.split(" VALUES ", 1)
    return f"{head} SELECT * FROM (VALUES {values}) AS v WHERE {when}"


async def run_in_transaction(db: SqlDatabase, prepared: ExchangeWrite) -> bool:
    """SQLite (inside the caller's transaction): the due-time push, then the inserts; whether extraction
    is due now."""
    rows = await db.returning(*prepared.due) if prepared.due else []
    for sql, params in prepared.parts:
        await db.write(sql, params)
    return bool(rows and rows[0][0])


def _rows(width: int, n: int) -> str:
    """``(?, …), (?, …)``: ``n`` rows of ``width`` values."""
    one = "(" + ", ".join("?" * width) + ")"
    return ", ".join([one] * n)

"""The SQL of the raw conversation tier: ``conversation_turns`` and its full-text index.

Every turn of a conversation is kept (``memory.turnRetentionDays`` may prune old ones), per owner, so
that ``conversation_search`` finds what was said even when no fact was extracted from it. The caller
passes the segmented ``search_text`` (``memory/text/tokenizer.py``) and the MATCH terms.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory.store.sql import SqlDatabase, marks, qualified
from memory.store.turn_sessions import SPARED
from memory.text import tokenizer

COLUMNS = "id, owner, channel, chat_id, role, content, created_at"


@dataclass(slots=True)
class TurnRow:
    """One stored turn."""

    id: int
    owner: str
    channel: str
    chat_id: str
    role: str
    content: str
    created_at: str


class TurnRows:
    """Reads and writes of kept turns; every statement filters on the owner."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db

    def written(self) -> None:
        """Turns were added elsewhere (``exchange.py``): nothing cached here to drop (PostgreSQL's
        ``PostgresTurnRows`` reads the table's size again)."""

    async def add(
        self, owner: str, *, channel: str, chat_id: str, role: str, content: str, search_text: str, at: str
    ) -> int:
        """Keep one turn; returns its id."""
        new_id = await self._db.insert(
            "INSERT INTO conversation_turns (owner, channel, chat_id, role, content, search_text, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (owner, channel, chat_id, role, content, search_text, at),
        )
        return int(new_id or 0)

    async def matches(
        self, owner: str, terms: Sequence[str], *, since: str | None, until: str | None, limit: int
    ) -> list[tuple[TurnRow, float, str]]:
        """The owner's turns matching any term, within ``[since, until)``: (turn, text score — bm25 as in
        ``search.Candidate``, higher is better —, the indexed text), best first."""
        where, params = ["t.owner = ?"], [owner]
        if since:
            where.append("t.created_at >= ?")
            params.append(since)
        if until:
            where.append("t.created_at < ?")
            params.append(until)
        columns = qualified(COLUMNS, "t")
        rows = await self._db.read(
            f"SELECT {columns}, bm25(turns_fts), t.search_text FROM turns_fts "
            "JOIN conversation_turns t ON t.id = turns_fts.rowid "
            f"WHERE turns_fts MATCH ? AND {' AND '.join(where)} ORDER BY bm25(turns_fts) LIMIT ?",
            (tokenizer.match_expression(list(terms)), *params, limit),
        )
        return [(TurnRow(*r[:7]), -float(r[7]), str(r[8])) for r in rows]

    async def indexed(self, owner: str, ids: Sequence[int]) -> list[tuple[TurnRow, float, str]]:
        """The owner's turns among ``ids`` shaped like ``matches`` rows (score 0: they matched no word)."""
        if not ids:
            return []
        rows = await self._db.read(
            f"SELECT {COLUMNS}, search_text FROM conversation_turns WHERE owner = ? "
            f"AND id IN ({marks(ids)}) ORDER BY id",
            (owner, *ids),
        )
        return [(TurnRow(*r[:7]), 0.0, str(r[7])) for r in rows]

    async def following(self, owner: str, ids: Sequence[int]) -> dict[int, tuple[TurnRow, float, str]]:
        """For each of the owner's turns among ``ids``, the turn right after it in its chat (the answer to
        a question), shaped like ``matches`` rows (score 0); a chat's last turn has none."""
        if not ids:
            return {}
        columns = qualified(COLUMNS, "n")
        rows = await self._db.read(
            f"SELECT q.id, {columns}, n.search_text FROM conversation_turns q "
            "JOIN conversation_turns n ON n.id = (SELECT m.id FROM conversation_turns m "
            "WHERE m.owner = q.owner AND m.channel = q.channel AND m.chat_id = q.chat_id AND m.id > q.id "
            "ORDER BY m.id LIMIT 1) "
            f"WHERE q.owner = ? AND q.id IN ({marks(ids)})",
            (owner, *ids),
        )
        return {int(r[0]): (TurnRow(*r[1:8]), 0.0, str(r[8])) for r in rows}

    async def last_in_chat(self, owner: str, channel: str, chat_id: str) -> TurnRow | None:
        """The chat's latest kept turn."""
        rows = await self._db.read(
            f"SELECT {COLUMNS} FROM conversation_turns WHERE owner = ? AND channel = ? AND chat_id = ? "
            "ORDER BY id DESC LIMIT 1",
            (owner, channel, chat_id),
        )
        return TurnRow(*rows[0]) if rows else None

    async def document_frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        """How many kept turns (all owners) contain each term."""
        out = {}
        for term in terms:
            out[term] = await self._db.scalar(
                "SELECT COUNT(*) FROM turns_fts WHERE turns_fts MATCH ?", (tokenizer.quote_term(term),)
            )
        return out

    async def total(self) -> int:
        """Kept turns of every owner (the idf's N)."""
        return await self._db.scalar("SELECT COUNT(*) FROM conversation_turns")

    async def neighbours(self, owner: str, turn: TurnRow, before: int, after: int) -> list[TurnRow]:
        """The turns just before and after ``turn`` in the same chat, in order (``turn`` included)."""
        chat = (owner, turn.channel, turn.chat_id)
        earlier = await self._db.read(
            f"SELECT {COLUMNS} FROM conversation_turns WHERE owner = ? AND channel = ? AND chat_id = ? "
            "AND id < ? ORDER BY id DESC LIMIT ?",
            (*chat, turn.id, before),
        )
        later = await self._db.read(
            f"SELECT {COLUMNS} FROM conversation_turns WHERE owner = ? AND channel = ? AND chat_id = ? "
            "AND id > ? ORDER BY id LIMIT ?",
            (*chat, turn.id, after),
        )
        return [TurnRow(*r) for r in reversed(earlier)] + [turn] + [TurnRow(*r) for r in later]

    async def by_ids(self, owner: str, ids: Sequence[int]) -> list[TurnRow]:
        """The owner's turns among ``ids`` (another owner's ids give nothing)."""
        if not ids:
            return []
        rows = await self._db.read(
            f"SELECT {COLUMNS} FROM conversation_turns WHERE owner = ? AND id IN ({marks(ids)}) ORDER BY id",
            (owner, *ids),
        )
        return [TurnRow(*r) for r in rows]

    async def page(self, owner: str, after_id: int, limit: int) -> list[TurnRow]:
        """The owner's turns after ``after_id``, oldest first (``limit`` at most)."""
        rows = await self._db.read(
            f"SELECT {COLUMNS} FROM conversation_turns WHERE owner = ? AND id > ? ORDER BY id LIMIT ?",
            (owner, after_id, limit),
        )
        return [TurnRow(*r) for r in rows]

    async def count(self, owner: str | None) -> int:
        """Kept turns of one owner, or of all when None."""
        cond, params = ("WHERE owner = ?", (owner,)) if owner is not None else ("", ())
        return await self._db.scalar(f"SELECT COUNT(*) FROM conversation_turns {cond}", params)

    # ----------------------------------------------------------------- vectors

    async def missing_vectors(
        self, model_key: str, *, after_id: int = 0, limit: int = 256, owner: str | None = None
    ) -> list[tuple[int, str, str]]:
        """Turns without a ``model_key`` vector, by id after ``after_id``: (id, owner, text to embed).

        The text is the turn after the one before it in its chat (a line between), as its word index
        holds that turn's words: "Yesterday, it was great" means something only after "When did you
        go?" (LoCoMo turns R@5 0.688 -> 0.708, bench/README.md "Conversation search")."""
        where = ""
        params: tuple[str, ...] = ()
        if owner is not None:
            where, params = "AND t.owner = ? ", (owner,)
        rows = await self._db.read(
            "SELECT t.id, t.owner, t.content, (SELECT p.content FROM conversation_turns p "
            "WHERE p.owner = t.owner AND p.channel = t.channel AND p.chat_id = t.chat_id AND p.id < t.id "
            "ORDER BY p.id DESC LIMIT 1) FROM conversation_turns t "
            "WHERE t.id > ? AND (t.embedding_model IS NULL OR t.embedding_model <> ? OR t.embedding IS NULL) "
            f"{where}"
            "ORDER BY t.id LIMIT ?",
            (after_id, model_key, *params, limit),
        )
        return [(int(i), str(o), f"{before}\n{c}" if before else str(c)) for i, o, c, before in rows]

    async def count_missing_vectors(self, model_key: str, owner: str | None = None) -> int:
        """How many turns have no vector of ``model_key``."""
        where = ""
        params: tuple[str, ...] = ()
        if owner is not None:
            where, params = "AND owner = ? ", (owner,)
        return await self._db.scalar(
            "SELECT COUNT(*) FROM conversation_turns "
            f"WHERE (embedding_model IS NULL OR embedding_model <> ? OR embedding IS NULL) {where}",
            (model_key, *params),
        )

    async def set_vectors(self, model_key: str, items: Sequence[tuple[int, bytes]]) -> int:
        """Store (turn id, vector blob) in one transaction; returns how many turns were still there."""
        async with self._db.transaction():
            cur = await self._db.write_many(
                "UPDATE conversation_turns SET embedding = ?, embedding_model = ? WHERE id = ?",
                [(blob, model_key, int(i)) for i, blob in items],
            )
        return int(cur.rowcount)

    async def vectors(self, owner: str, model_key: str, after_id: int = 0) -> list[tuple[int, bytes]]:
        """The owner's turn vectors of ``model_key`` (id, blob) after ``after_id``, by id."""
        rows = await self._db.read(
            "SELECT id, embedding FROM conversation_turns WHERE owner = ? AND embedding_model = ? "
            "AND embedding IS NOT NULL AND id > ? ORDER BY id",
            (owner, model_key, after_id),
        )
        return [(int(i), bytes(b)) for i, b in rows]

    async def prune(self, before: str) -> int:
        """Delete every turn older than ``before`` (retention) that no extraction waits for — none past its
        owner's watermark, none with a failure row (a retry or a dead letter: ``turn_watermark.py``) — and
        that no chat's history may show (the newest of its current session: ``turn_sessions.SPARED``);
        returns how many."""
        cur = await self._db.write(
            "DELETE FROM conversation_turns WHERE created_at < ? AND id <= COALESCE((SELECT "
            "d.extracted_through FROM extraction_due d WHERE d.owner = conversation_turns.owner), id) "
            "AND NOT EXISTS (SELECT 1 FROM extraction_failures f WHERE f.turn_id = conversation_turns.id) "
            f"AND NOT EXISTS (SELECT 1 FROM ({SPARED}) AS spared WHERE spared.id = conversation_turns.id)",
            (before,),
        )
        return int(cur.rowcount)

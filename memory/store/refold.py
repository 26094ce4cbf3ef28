"""The rows a re-index of Chinese search text walks (issue 35): the marker table and its SQL.

Since ``memory/text/script.py`` the tokenizer indexes and searches Traditional Chinese as Simplified, so a
row indexed by an older tierclaw (the tokens jieba made of "我們去了臺灣": ``臺 灣的``…) is not found by a
query of today (``台湾``). The schema version ``SEARCH_REFOLD`` adds ``search_refold``: for each searchable
table, the id up to which its rows were re-indexed; a table's row is dropped once it is walked. Since round
41 the tokenizer also indexes an unknown Han word's pairs of characters (``tokenizer.search_words``): the
version ``SEARCH_REINDEX`` marks every table again, from its first row.
``memory/search_refold.py`` walks them (it knows how each table's search text is made); here are the
reads and writes it needs, one batch by id at a time, so each batch is one short transaction.

The triggers of both stores keep the full-text indexes and PostgreSQL's term counts when ``search_text``
changes; SQLite's turn index has no update trigger (turns are never edited), so its entries are replaced
here. Several replicas opening at once rewrite a row only while it still holds the text they read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory.store.sql import SqlDatabase, marks

__all__ = ["SEARCH_REFOLD", "SEARCH_REINDEX", "TABLES", "RefoldRows"]

# The tables whose ``search_text`` the tokenizer made, in the order they are walked.
TABLES = ("memories", "conversation_turns", "daily_events", "attachments")

_MARK_ALL = """
INSERT INTO search_refold (part, after_id) VALUES
    ('memories', 0), ('conversation_turns', 0), ('daily_events', 0), ('attachments', 0);
"""
SEARCH_REFOLD = (
    """
CREATE TABLE search_refold (
    part     {TEXT}   PRIMARY KEY,
    after_id {BIGINT} NOT NULL DEFAULT 0
);"""
    + _MARK_ALL
)
# Every table walked again from its first row, a walk an older tierclaw left half done included.
SEARCH_REINDEX = "\nDELETE FROM search_refold;" + _MARK_ALL

# What each table's search text is made of, for the rows that are rewritten (``search_refold.py`` says
# how): a turn's own words and those of the turn before it in its chat.
_SOURCES = {
    "memories": "content",
    "conversation_turns": (
        "content, (SELECT p.content FROM conversation_turns p WHERE p.owner = t.owner "
        "AND p.channel = t.channel AND p.chat_id = t.chat_id AND p.id < t.id ORDER BY p.id DESC LIMIT 1)"
    ),
    "daily_events": "summary, goal, entities",
    "attachments": "file_name, caption, description, transcription, extracted_text",
}


class RefoldRows:
    """The marker and the rows of one store (see the module docstring)."""

    def __init__(self, db: SqlDatabase) -> None:
        self._db = db

    async def pending(self) -> dict[str, int]:
        """Each table still to walk, with the id its walk has passed."""
        rows = await self._db.read("SELECT part, after_id FROM search_refold")
        return {str(part): int(after) for part, after in rows}

    async def texts(self, table: str, after: int, limit: int) -> list[tuple[int, str]]:
        """(id, search_text) of the next ``limit`` rows after id ``after``, in id order."""
        rows = await self._db.read(
            f"SELECT id, search_text FROM {_table(table)} WHERE id > ? ORDER BY id LIMIT ?", (after, limit)
        )
        return [(int(i), str(text)) for i, text in rows]

    async def sources(self, table: str, ids: Sequence[int]) -> dict[int, tuple[Any, ...]]:
        """What the search text of each row of ``ids`` is made of (``_SOURCES``), by id."""
        if not ids:
            return {}
        rows = await self._db.read(
            f"SELECT t.id, {_SOURCES[_table(table)]} FROM {table} t WHERE t.id IN ({marks(ids)})", list(ids)
        )
        return {int(r[0]): tuple(r[1:]) for r in rows}

    async def rewrite(self, table: str, rows: Sequence[tuple[int, str, str]]) -> None:
        """Each (id, old, new): the row's search text becomes ``new`` if it still is ``old``."""
        if _table(table) == "conversation_turns" and self._db.kind == "sqlite":
            await self._db.write_many(
                "INSERT INTO turns_fts(turns_fts, rowid, search_text) VALUES ('delete', ?, ?)",
                [(i, old) for i, old, _ in rows],
            )
            await self._db.write_many(
                "UPDATE conversation_turns SET search_text = ? WHERE id = ?", [(new, i) for i, _, new in rows]
            )
            await self._db.write_many(
                "INSERT INTO turns_fts(rowid, search_text) VALUES (?, ?)", [(i, new) for i, _, new in rows]
            )
            return
        await self._db.write_many(
            f"UPDATE {table} SET search_text = ? WHERE id = ? AND search_text = ?",
            [(new, i, old) for i, old, new in rows],
        )

    async def forget_vectors(self, ids: Sequence[int], hashes: Sequence[str], models: Sequence[str]) -> None:
        """The memories ``ids`` lose their vectors of ``models[0]`` (the backfill makes them again), and
        the vector cache its rows of ``models`` for the texts of ``hashes``."""
        if ids:
            await self._db.write(
                "UPDATE memories SET embedding = NULL, embedding_model = NULL "
                f"WHERE embedding_model = ? AND id IN ({marks(ids)})",
                (models[0], *ids),
            )
        if hashes:
            where = f"model IN ({marks(models)}) AND text_hash IN ({marks(hashes)})"
            await self._db.write(f"DELETE FROM embedding_cache WHERE {where}", (*models, *hashes))

    async def passed(self, table: str, last: int) -> None:
        """The walk of ``table`` is past id ``last``."""
        sql = "UPDATE search_refold SET after_id = ? WHERE part = ? AND after_id < ?"
        await self._db.write(sql, (last, _table(table), last))

    async def finished(self, table: str) -> None:
        """``table`` is walked to its end: nothing of it is left to re-index."""
        await self._db.write("DELETE FROM search_refold WHERE part = ?", (_table(table),))


def _table(name: str) -> str:
    """``name`` when it is one of ``TABLES`` (it is put into SQL text), else ValueError."""
    if name not in TABLES:
        raise ValueError(f"not a searchable table: {name!r}")
    return name

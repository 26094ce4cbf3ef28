"""The attachment memory's full text on PostgreSQL: GIN ``@@`` and bm25 as FTS5 computes it
(``fulltext.py``); every other statement is ``memory/store/attachments.py``'s."""

from __future__ import annotations

from collections.abc import Sequence

from memory.store.attachments import AttachmentRow, AttachmentRows, NewAttachment, columns, row_of
from memory.store.postgres.fulltext import TableSize, any_of, bm25, ranked, term_frequencies
from memory.store.sql import SqlDatabase


class PostgresAttachmentRows(AttachmentRows):
    """Attachments; ``matches`` ranks by bm25 over ``attachments``."""

    def __init__(self, db: SqlDatabase) -> None:
        super().__init__(db)
        self._size = TableSize(db, "attachments")

    async def add(self, owner: str, new: NewAttachment, at: str) -> tuple[int, bool]:
        """As ``AttachmentRows.add``; the table's size is read again before the next score."""
        self._size.changed()
        return await super().add(owner, new, at)

    async def delete(self, owner: str, attachment_id: int) -> bool:
        """As ``AttachmentRows.delete``."""
        self._size.changed()
        return await super().delete(owner, attachment_id)

    async def matches(
        self, owner: str, terms: Sequence[str], *, limit: int
    ) -> list[tuple[AttachmentRow, float, str]]:
        """The owner's attachments holding any term, best bm25 first."""
        if not terms:
            return []
        rows = await self._db.read(
            f"SELECT {columns()}, search_text FROM attachments "
            "WHERE search_tsv @@ CAST(? AS tsquery) AND owner = ?",
            (any_of(terms), owner),
        )
        unique = list(dict.fromkeys(terms))
        stats = await self._size.statistics(await term_frequencies(self._db, "attachments", unique))
        scored = [(int(r[0]), bm25(str(r[21]), unique, stats)) for r in rows]
        return [(row_of(rows[i][:21]), scored[i][1], str(rows[i][21])) for i in ranked(scored, limit)]

"""The SQL of stored vectors: each memory's own vector, and the content-hash cache of passage vectors.

Vectors are bytes beside rows (little-endian float32, ``memory/vectors/index.py`` defines the format);
the store never compares them — search is done in RAM per owner (docs/architecture.md, "Embeddings").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from memory.store.changes import ChangeFeed
from memory.store.sql import SqlDatabase, chunks, marks


class VectorRows:
    """Memory vectors (``memories.embedding``) and the ``embedding_cache`` table."""

    def __init__(self, db: SqlDatabase, changes: ChangeFeed) -> None:
        self._db = db
        self._changes = changes  # new vectors bump their owners' versions: other processes reload them

    # ----------------------------------------------------------------- memory vectors

    async def missing(
        self, model_key: str, *, after_id: int = 0, limit: int = 256, owner: str | None = None
    ) -> list[tuple[int, str, str]]:
        """Live memories without a ``model_key`` vector: (id, owner, content) by id after ``after_id``."""
        where = ""
        params: tuple[str, ...] = ()
        if owner is not None:
            where, params = "AND owner = ? ", (owner,)
        rows = await self._db.read(
            "SELECT id, owner, content FROM memories WHERE is_archived = 0 AND id > ? "
            "AND (embedding_model IS NULL OR embedding_model <> ? OR embedding IS NULL) "
            f"{where}ORDER BY id LIMIT ?",
            (after_id, model_key, *params, limit),
        )
        return [(int(i), str(o), str(c)) for i, o, c in rows]

    async def count_missing(self, model_key: str, owner: str | None = None) -> int:
        """How many live memories have no vector of ``model_key``."""
        where = ""
        params: tuple[str, ...] = ()
        if owner is not None:
            where, params = "AND owner = ? ", (owner,)
        return await self._db.scalar(
            "SELECT COUNT(*) FROM memories WHERE is_archived = 0 "
            f"AND (embedding_model IS NULL OR embedding_model <> ? OR embedding IS NULL) {where}",
            (model_key, *params),
        )

    async def set(self, model_key: str, items: Sequence[tuple[int, str, bytes]]) -> tuple[int, list[str]]:
        """Store (id, embedded content, vector blob) where the row still has that content.

        Returns (rows updated, owners of the given ids) in one transaction.
        """
        async with self._changes.unit():
            cur = await self._db.write_many(
                "UPDATE memories SET embedding = ?, embedding_model = ? WHERE id = ? AND content = ?",
                [(blob, model_key, int(i), content) for i, content, blob in items],
            )
            ids = [int(i) for i, _, _ in items]
            owners = await self._db.read(
                f"SELECT DISTINCT owner FROM memories WHERE id IN ({marks(ids)})", ids
            )
            if cur.rowcount:
                await self._changes.bump("vectors", (str(o) for (o,) in owners))
        return int(cur.rowcount), [str(o) for (o,) in owners]

    async def of_owner(self, owner: str, model_key: str) -> list[tuple[int, int, bytes]]:
        """(id, tier, vector blob) of the owner's live memories that hold a ``model_key`` vector."""
        rows = await self._db.read(
            "SELECT id, tier, embedding FROM memories WHERE owner = ? AND is_archived = 0 "
            "AND embedding_model = ? AND embedding IS NOT NULL",
            (owner, model_key),
        )
        # The schema's column types; not converted row by row (an owner may hold many thousands).
        return cast(list[tuple[int, int, bytes]], rows)

    # ----------------------------------------------------------------- the content-hash cache

    async def cached(self, model: str, keys: Sequence[str]) -> list[tuple[str, int, bytes, str]]:
        """Cached rows (text_hash, dim, vector, last_used) of ``model`` for ``keys``."""
        rows: list[tuple[str, int, bytes, str]] = []
        for chunk in chunks(list(keys)):
            rows.extend(
                (str(text_hash), int(dim), bytes(vector), str(last_used))
                for text_hash, dim, vector, last_used in await self._db.read(
                    "SELECT text_hash, dim, vector, last_used FROM embedding_cache "
                    f"WHERE model = ? AND text_hash IN ({marks(chunk)})",
                    (model, *chunk),
                )
            )
        return rows

    async def cache(
        self, model: str, fresh: Sequence[tuple[str, int, bytes]], touched: Sequence[str], stamp: str
    ) -> None:
        """Write new (text_hash, dim, blob) rows (replacing stale ones) and refresh ``last_used`` of
        ``touched`` hashes, in one transaction."""
        async with self._db.transaction():
            if fresh:
                await self._db.write_many(
                    "INSERT INTO embedding_cache (text_hash, model, dim, vector, last_used) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (text_hash, model) DO UPDATE SET dim = excluded.dim, "
                    "vector = excluded.vector, last_used = excluded.last_used",
                    [(k, model, dim, blob, stamp) for k, dim, blob in fresh],
                )
            if touched:
                await self._db.write_many(
                    "UPDATE embedding_cache SET last_used = ? WHERE text_hash = ? AND model = ?",
                    [(stamp, k, model) for k in touched],
                )

    async def uncache(self, text_hash: str) -> None:
        """Forget the cached vectors of one text (every model)."""
        await self._db.write("DELETE FROM embedding_cache WHERE text_hash = ?", (text_hash,))

    async def evict_cached(self, unused_since: str) -> int:
        """Delete cached vectors not used since ``unused_since``; returns how many went."""
        cur = await self._db.write("DELETE FROM embedding_cache WHERE last_used < ?", (unused_since,))
        return int(cur.rowcount)

    async def cache_counts(self) -> dict[str, int]:
        """Cached rows per model column."""
        rows = await self._db.read(
            "SELECT model, COUNT(*) FROM embedding_cache GROUP BY model ORDER BY model"
        )
        return {r[0]: int(r[1]) for r in rows}

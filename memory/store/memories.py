"""The SQL of the ``memories`` table (Tiers 1 and 2) and its source references (``memory_refs``).

Every statement filters on the owner, so no call returns or touches another owner's rows (docs/
architecture.md, "Who owns what"). The decisions of the clean write path (duplicate, near duplicate,
supersede) are made in ``memory/writes.py``; this module only runs the statements it asks for. Inserts
and purges keep the term index's row count and frequencies current, and every change of an owner's
text, liveness or projects bumps the owner's change version in the same transaction (``changes.py``), so
other processes' caches of them follow.
"""

from __future__ import annotations

import builtins  # the class's own ``list`` method hides the builtin in its annotations
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from memory.records import GLOBAL_PROJECT, Fact, Memory
from memory.store.changes import ChangeFeed
from memory.store.sql import OWNER_LOCKS, Row, SqlDatabase, chunks, marks

MEMORY_COLUMNS = (
    "id, owner, tier, project, topic, category, content, importance, source, source_ref, subject, "
    "predicate, created_at, updated_at, last_accessed, access_count, is_archived, superseded_by"
)

# The higher of the row's importance and a parameter (given twice), in SQL both backends accept (SQLite's
# two-argument MAX is PostgreSQL's GREATEST).
_AT_LEAST = "CASE WHEN importance >= ? THEN importance ELSE ? END"


def memory_from_row(row: Row) -> Memory:
    """A ``Memory`` from a row selected as ``MEMORY_COLUMNS``."""
    return Memory(
        id=row[0],
        owner=row[1],
        tier=row[2],
        project=row[3],
        topic=row[4],
        category=row[5],
        content=row[6],
        importance=row[7],
        source=row[8],
        source_ref=row[9],
        subject=row[10],
        predicate=row[11],
        created_at=row[12],
        updated_at=row[13],
        last_accessed=row[14],
        access_count=row[15],
        is_archived=bool(row[16]),
        superseded_by=row[17],
    )


class WrittenTexts(Protocol):
    """What the rows tell the full-text side of their store (``search.TermIndex`` or PostgreSQL's)."""

    indexed_rows: int

    def forget_terms(self, search_text: str) -> None: ...


@dataclass(slots=True)
class NewRow:
    """What ``insert`` writes besides the fact itself (derived by the caller)."""

    norm_key: str
    search_text: str
    created_at: str
    vector: bytes | None = None
    vector_model: str | None = None


class MemoryRows:
    """Reads and writes of memory rows."""

    def __init__(self, db: SqlDatabase, index: WrittenTexts, changes: ChangeFeed) -> None:
        self._db = db
        self._index = index
        self._changes = changes

    async def _changed(self, owner: str, rows_delta: int = 0) -> None:
        await self._changes.bump("memories", (owner,), rows_delta)

    async def _changed_rows(self, ids: Sequence[int]) -> None:
        """Bump the owners of ``ids`` (the statements that name rows by id only)."""
        for chunk in chunks(list(ids)):
            rows = await self._db.read(
                f"SELECT DISTINCT owner FROM memories WHERE id IN ({marks(chunk)})", chunk
            )
            await self._changes.bump("memories", (str(r[0]) for r in rows))

    # ----------------------------------------------------------------- reads

    async def get(self, owner: str, memory_id: int) -> Memory | None:
        """One memory of the owner (live or archived), with its source references."""
        rows = await self._db.read(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ? AND owner = ?", (memory_id, owner)
        )
        if not rows:
            return None
        mem = memory_from_row(rows[0])
        mem.refs = (await self.refs(owner, [mem.id])).get(mem.id, [])
        return mem

    async def owner_of(self, memory_id: int) -> str | None:
        """Whose memory ``memory_id`` is (None when there is no such row): ids are unique across owners."""
        rows = await self._db.read("SELECT owner FROM memories WHERE id = ?", (memory_id,))
        return str(rows[0][0]) if rows else None

    async def list(
        self,
        owner: str,
        *,
        tier: int | None = None,
        project: str | None = None,
        include_archived: bool = False,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Memory]:
        """The owner's memories, newest first, optionally filtered by tier and project, with references."""
        where = ["owner = ?"]
        params: list[object] = [owner]
        if tier is not None:
            where.append("tier = ?")
            params.append(tier)
        if project is not None:
            where.append("project = ?")
            params.append(project)
        if not include_archived:
            where.append("is_archived = 0")
        rows = await self._db.read(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {' AND '.join(where)} "
            "ORDER BY id DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        mems = [memory_from_row(r) for r in rows]
        refs = await self.refs(owner, [m.id for m in mems])
        for m in mems:
            m.refs = refs.get(m.id, [])
        return mems

    async def refs(self, owner: str, memory_ids: Sequence[int]) -> dict[int, builtins.list[str]]:
        """Every source reference each memory absorbed (its own plus those of merged duplicates)."""
        out: dict[int, list[str]] = {}
        for chunk in chunks(list(memory_ids)):
            rows = await self._db.read(
                "SELECT r.memory_id, r.ref FROM memory_refs r JOIN memories m ON m.id = r.memory_id "
                f"WHERE m.owner = ? AND r.memory_id IN ({marks(chunk)}) ORDER BY r.ref",
                (owner, *chunk),
            )
            for mid, ref in rows:
                out.setdefault(mid, []).append(ref)
        return out

    async def live(
        self,
        owner: str,
        *,
        tier: int,
        project: str | None = None,
        topic: str | None = None,
        categories: Sequence[str] | None = None,
        min_importance: float | None = None,
        order: str = "id",
        limit: int | None = None,
    ) -> builtins.list[Memory]:
        """The owner's live memories of ``tier``, filtered. ``order``: "id", "importance" (most important
        first, then oldest), or "importance_newest" (most important first, then newest)."""
        where = ["owner = ?", "tier = ?", "is_archived = 0"]
        params: list[object] = [owner, tier]
        for column, value in (("project", project), ("topic", topic)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if categories is not None:
            where.append(f"category IN ({marks(categories)})")
            params.extend(categories)
        if min_importance is not None:
            where.append("importance >= ?")
            params.append(min_importance)
        order_by = {
            "id": "id",
            "importance": "importance DESC, id",
            "importance_newest": "importance DESC, id DESC",
        }
        sql = f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {' AND '.join(where)} ORDER BY {order_by[order]}"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [memory_from_row(r) for r in await self._db.read(sql, params)]

    async def projects(self, owner: str) -> frozenset[str]:
        """Project names the owner's live Tier 2 memories use (``_global`` left out)."""
        rows = await self._db.read(
            "SELECT DISTINCT project FROM memories WHERE owner = ? AND tier = 2 AND is_archived = 0", (owner,)
        )
        return frozenset(r[0] for r in rows if r[0] != GLOBAL_PROJECT)

    async def partitions(self, owner: str, tier: int) -> builtins.list[tuple[str, str, int]]:
        """(project, topic, live count) of every partition of the owner's live memories in ``tier``."""
        rows = await self._db.read(
            "SELECT project, topic, COUNT(*) FROM memories WHERE owner = ? AND tier = ? AND is_archived = 0 "
            "GROUP BY project, topic ORDER BY project, topic",
            (owner, tier),
        )
        return [(r[0], r[1], int(r[2])) for r in rows]

    async def counts(self, owner: str | None) -> dict[str, int]:
        """Live rows per tier and archived rows (one owner, or all when None)."""
        cond, params = ("WHERE owner = ?", (owner,)) if owner is not None else ("", ())
        rows = await self._db.read(
            f"SELECT tier, is_archived, COUNT(*) FROM memories {cond} GROUP BY tier, is_archived", params
        )
        return {
            "tier1": sum(n for t, a, n in rows if t == 1 and not a),
            "tier2": sum(n for t, a, n in rows if t == 2 and not a),
            "archived": sum(n for _, a, n in rows if a),
        }

    # ----------------------------------------------------------------- lookups of the clean write path

    async def serialise_owner(self, owner: str) -> None:
        """Make this transaction the owner's only memory writer until it ends (call it first, inside the
        transaction): on PostgreSQL a transaction-scoped advisory lock per owner, so the clean write
        path's reads (duplicates, supersedes) of two gateways never interleave; its later statements take
        their snapshots after the lock, so they see what the previous writer committed. On SQLite the
        transaction's ``BEGIN IMMEDIATE`` already made it the file's only writer: nothing more to do, the
        same call (docs/scale-out.md, "One writer per owner")."""
        if not self._db.in_transaction():
            raise RuntimeError("serialise_owner belongs inside the write's transaction")
        if self._db.kind == "postgresql":
            await self._db.read("SELECT pg_advisory_xact_lock(?, hashtext(?))", (OWNER_LOCKS, owner))

    async def same_subject(self, owner: str, subject: str, predicate: str) -> builtins.list[tuple[int, str]]:
        """(id, norm_key) of the owner's live memories about ``subject``/``predicate``, newest first."""
        rows = await self._db.read(
            "SELECT id, norm_key FROM memories WHERE owner = ? AND subject = ? AND predicate = ? "
            "AND is_archived = 0 ORDER BY id DESC",
            (owner, subject, predicate),
        )
        return [(int(i), str(k)) for i, k in rows]

    async def same_key(self, owner: str, norm_key: str, tier: int) -> int | None:
        """A live memory of ``tier`` with this normalised text, if any."""
        rows = await self._db.read(
            "SELECT id FROM memories WHERE owner = ? AND norm_key = ? AND is_archived = 0 AND tier = ? "
            "LIMIT 1",
            (owner, norm_key, tier),
        )
        return int(rows[0][0]) if rows else None

    async def live_embedded_content(
        self, owner: str, memory_id: int, tier: int, model_key: str
    ) -> str | None:
        """The text of a live memory of ``tier`` that still holds a ``model_key`` vector, else None."""
        rows = await self._db.read(
            "SELECT content FROM memories WHERE id = ? AND owner = ? AND is_archived = 0 AND tier = ? "
            "AND embedding_model = ? AND embedding IS NOT NULL",
            (memory_id, owner, tier, model_key),
        )
        return str(rows[0][0]) if rows else None

    async def live_keys(self, owner: str, ids: Sequence[int]) -> dict[int, tuple[str, int]]:
        """id -> (norm_key, tier) for those of ``ids`` that are live memories of the owner."""
        out: dict[int, tuple[str, int]] = {}
        for chunk in chunks(list(ids)):
            rows = await self._db.read(
                f"SELECT id, norm_key, tier FROM memories WHERE owner = ? AND is_archived = 0 "
                f"AND id IN ({marks(chunk)})",
                (owner, *chunk),
            )
            out.update({int(i): (k, int(t)) for i, k, t in rows})
        return out

    async def archived_among(self, ids: Sequence[int]) -> builtins.list[int]:
        """Those of ``ids`` that are archived, ascending."""
        out: list[int] = []
        for chunk in chunks(list(ids)):
            rows = await self._db.read(
                f"SELECT id FROM memories WHERE is_archived = 1 AND id IN ({marks(chunk)}) ORDER BY id", chunk
            )
            out.extend(int(r[0]) for r in rows)
        return out

    # ----------------------------------------------------------------- writes

    async def insert(self, owner: str, fact: Fact, row: NewRow) -> int:
        """Insert one validated fact (and its source reference); returns the new id."""
        self._index.forget_terms(row.search_text)
        async with self._changes.unit():
            new_id = await self._inserted(owner, fact, row)
            await self._changed(owner, rows_delta=1)
        self._index.indexed_rows += 1
        return new_id

    async def _inserted(self, owner: str, fact: Fact, row: NewRow) -> int:
        new_id = await self._db.insert(
            "INSERT INTO memories (owner, tier, project, topic, category, content, search_text, norm_key, "
            "importance, source, source_ref, subject, predicate, created_at, updated_at, last_accessed, "
            "embedding, embedding_model) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "RETURNING id",
            (
                owner,
                fact.tier,
                fact.project,
                fact.topic,
                fact.category,
                fact.content,
                row.search_text,
                row.norm_key,
                fact.importance,
                fact.source,
                fact.source_ref,
                fact.subject,
                fact.predicate,
                row.created_at,
                row.created_at,
                row.created_at,
                row.vector,
                row.vector_model,
            ),
        )
        if new_id is None:
            raise RuntimeError("the memory insert returned no id")
        if fact.source_ref:
            await self.add_ref(new_id, fact.source_ref)
        return new_id

    async def add_ref(self, memory_id: int, ref: str) -> None:
        """Record one more source reference of a memory (kept once)."""
        await self._db.write(
            "INSERT INTO memory_refs(memory_id, ref) VALUES (?, ?) ON CONFLICT DO NOTHING", (memory_id, ref)
        )

    async def copy_refs(self, target: int, from_ids: Sequence[int]) -> None:
        """Give ``target`` every source reference of ``from_ids`` (references only add, never replace)."""
        await self._db.write(
            "INSERT INTO memory_refs(memory_id, ref) SELECT CAST(? AS INTEGER), ref FROM memory_refs "
            f"WHERE memory_id IN ({marks(from_ids)}) ON CONFLICT DO NOTHING",
            (target, *from_ids),
        )

    async def merge_into(self, memory_id: int, importance: float, now: str) -> None:
        """A duplicate arrived: count it as an access and keep the higher importance."""
        await self._db.write(
            "UPDATE memories SET access_count = access_count + 1, importance = "
            f"{_AT_LEAST}, updated_at = ? WHERE id = ?",
            (importance, importance, now, memory_id),
        )

    async def raise_importance(self, memory_id: int, importance: float) -> None:
        """Keep the higher of the row's and ``importance``."""
        await self._db.write(
            f"UPDATE memories SET importance = {_AT_LEAST} WHERE id = ?", (importance, importance, memory_id)
        )

    async def supersede(self, old_ids: Iterable[int], new_id: int, now: str) -> None:
        """Archive ``old_ids``, each pointing to its successor ``new_id``."""
        async with self._changes.unit():
            await self._db.write_many(
                "UPDATE memories SET is_archived = 1, superseded_by = ?, updated_at = ? WHERE id = ?",
                [(new_id, now, old_id) for old_id in old_ids],
            )
            await self._changed_rows([new_id])

    async def archive_into(self, old_id: int, target: int | None, now: str) -> None:
        """Archive a live row; when ``target`` is given, it points there (``superseded_by``)."""
        async with self._changes.unit():
            await self._db.write(
                "UPDATE memories SET is_archived = 1, updated_at = ?, "
                "superseded_by = COALESCE(?, superseded_by) WHERE id = ? AND is_archived = 0",
                (now, target, old_id),
            )
            await self._changed_rows([old_id])

    async def update(
        self, owner: str, memory_id: int, fact: Fact, *, norm_key: str, search_text: str, now: str
    ) -> None:
        """Rewrite a memory's fields; its vector is kept only when the text did not change."""
        self._index.forget_terms(search_text)
        async with self._changes.unit():
            await self._updated(owner, memory_id, fact, norm_key=norm_key, search_text=search_text, now=now)
            await self._changed(owner)

    async def _updated(
        self, owner: str, memory_id: int, fact: Fact, *, norm_key: str, search_text: str, now: str
    ) -> None:
        await self._db.write(
            "UPDATE memories SET content = ?, search_text = ?, norm_key = ?, project = ?, topic = ?, "
            "category = ?, importance = ?, tier = ?, updated_at = ?, "
            "embedding = CASE WHEN content = ? THEN embedding END, "
            "embedding_model = CASE WHEN content = ? THEN embedding_model END "
            "WHERE id = ? AND owner = ?",
            (
                fact.content,
                search_text,
                norm_key,
                fact.project,
                fact.topic,
                fact.category,
                fact.importance,
                fact.tier,
                now,
                fact.content,
                fact.content,
                memory_id,
                owner,
            ),
        )

    async def archive(self, owner: str, ids: Sequence[int], now: str) -> int:
        """Soft-delete those of ``ids`` that are live memories of the owner; returns how many."""
        done = 0
        async with self._changes.unit():
            for chunk in chunks(list(ids)):
                cur = await self._db.write(
                    "UPDATE memories SET is_archived = 1, updated_at = ? WHERE owner = ? AND is_archived = 0 "
                    f"AND id IN ({marks(chunk)})",
                    (now, owner, *chunk),
                )
                done += int(cur.rowcount)
            if done:
                await self._changed(owner)
        return done

    async def restore(self, owner: str, memory_id: int, now: str) -> bool:
        """Make an archived memory of the owner live again (no longer pointing to a successor)."""
        async with self._changes.unit():
            cur = await self._db.write(
                "UPDATE memories SET is_archived = 0, superseded_by = NULL, updated_at = ? "
                "WHERE id = ? AND owner = ? AND is_archived = 1",
                (now, memory_id, owner),
            )
            if cur.rowcount > 0:
                await self._changed(owner)
        return int(cur.rowcount) > 0

    async def purge(self, owner: str, memory_id: int) -> str | None:
        """Delete one memory for good; returns its text, or None when the owner had no such row."""
        async with self._changes.unit():
            content = await self._purged(owner, memory_id)
            if content is not None:
                await self._changed(owner, rows_delta=-1)
        return content

    async def _purged(self, owner: str, memory_id: int) -> str | None:
        await self._db.write(
            "UPDATE memories SET superseded_by = NULL WHERE superseded_by = ? AND owner = ?",
            (memory_id, owner),
        )
        content = await self._db.read(
            "SELECT content FROM memories WHERE id = ? AND owner = ?", (memory_id, owner)
        )
        cur = await self._db.write("DELETE FROM memories WHERE id = ? AND owner = ?", (memory_id, owner))
        if cur.rowcount <= 0:
            return None
        self._index.indexed_rows -= 1
        return str(content[0][0])

    async def touch(self, ids: Sequence[int], now: str, times: int = 1) -> None:
        """Mark memories as used ``times`` times by ``now`` (access time and count): the decay clock
        restarts. The id list is padded to a power of two with its last id (a repeat changes nothing), so
        batches of any size share a few statement texts: each text is a prepared statement on every
        pooled PostgreSQL connection (``postgres/database.py``), and a text per batch size would push the
        reply path's out of psycopg's cache (``memory/touches.py`` batches many replies' marks)."""
        for chunk in chunks(list(ids)):
            padded = [*chunk, *[chunk[-1]] * ((1 << (len(chunk) - 1).bit_length()) - len(chunk))]
            await self._db.write(
                "UPDATE memories SET last_accessed = ?, access_count = access_count + ? "
                f"WHERE id IN ({marks(padded)})",
                (now, times, *padded),
            )

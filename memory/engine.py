"""The memory engine: one SQLite file (aiosqlite, WAL) holding tiers 1–3 for every owner.

Every public method takes the ``owner`` and every SQL statement filters on it: no call ever returns or
touches another owner's rows. Writes go through one clean path (``write``) that merges exact and near
duplicates and lets a fact with the same subject+predicate supersede the old one, so the store stays
small and nothing is silently lost (rows are archived, never deleted, except by ``purge``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
import sqlite3
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Protocol

import aiosqlite
import numpy as np

from memory.clock import days_between, to_db, utcnow
from memory.records import GLOBAL_PROJECT, Event, Fact, Memory, Retrieved, WriteResult
from memory.retrieval.decay import CATEGORIES, relevance_score
from memory.store.schema import check_version, migrate
from memory.text import tokenizer
from memory.text.dedup import content_words, is_near_duplicate, norm_key
from memory.text.merge_guard import guard_allows_merge
from memory.text.timeref import TimeWindow, find_window
from memory.vectors.cache import text_hash
from memory.vectors.index import OwnerVectors, vector_to_blob

log = logging.getLogger("tierclaw.memory")

_MEMORY_COLUMNS = (
    "id, owner, tier, project, topic, category, content, importance, source, source_ref, subject, "
    "predicate, created_at, updated_at, last_accessed, access_count, is_archived, superseded_by"
)
_EVENT_COLUMNS = (
    "id, owner, event_date, channel, sender_id, summary, raw_tokens, is_compressed, created_at, source_ref"
)

# Near-duplicate candidates must contain this many of the new fact's rarest terms.
NEAR_DUP_TERMS = 2
# Longest memory accepted: a memory is a fact (seed 000: at most ~100 characters), not a document, and
# segmenting megabytes on every write would stall the writer.
MAX_CONTENT_CHARS = 20000
# How many FTS candidates are ranked in Python after bm25 has ordered them.
FTS_CANDIDATES = 50
# How many rows of a matched project partition join the candidates (seed 000 §5.3: LIMIT 20).
PARTITION_CANDIDATES = 20
# Terms found in more than this share of all indexed rows are dropped from the MATCH when rarer terms
# exist: they add little to bm25 but make SQLite walk long posting lists (100 ms at 100k rows).
COMMON_TERM_SHARE = 0.05
COMMON_TERM_FLOOR = 200
# Text relevance of a candidate = (bm25 / best bm25 + COVERAGE_WEIGHT * coverage) / (1 + COVERAGE_WEIGHT),
# times (1 + PROXIMITY_WEIGHT * adjacent query-word pairs it contains). Coverage (the idf-weighted share
# of query terms present) and proximity ("homeless shelter" as a phrase) re-rank bm25's top candidates;
# chosen on LoCoMo and MADial-zh (bench/retrieval_quality.py), where each helps both languages.
COVERAGE_WEIGHT = 2.0
PROXIMITY_WEIGHT = 0.3
# Weight of the seed-000 decay score against text relevance: final = text * (1 + DECAY_WEIGHT * decay).
# Small on purpose: an old memory that answers the question must beat a fresh one that does not.
DECAY_WEIGHT = 0.1
# Text relevance given to a partition row that matched the project but no query term.
PARTITION_ONLY_TEXT = 0.25
# Multiplier bonus for a memory written inside the time window the message names ("in March 2023").
TIME_WINDOW_BOOST = 2.0
# Text relevance of a memory inside the window that matched no query term ("what did I say yesterday?").
WINDOW_ONLY_TEXT = 0.2
# Hybrid ranking (with an embedder): the FTS ranking above and the cosine ranking of the owner's
# vectors are fused by weighted reciprocal rank, fused = 1/(RRF_K + text rank) + DENSE_WEIGHT/(RRF_K +
# dense rank), then decay on top as above. Chosen on LoCoMo and MADial zh/en (bench/README.md: ranks
# beat score mixing because bm25 and cosine scales differ per query; a small k trusts the top ranks).
RRF_K = 3
DENSE_WEIGHT = 1.5
DENSE_CANDIDATES = 50
# e5 cosines live in a narrow band (top hits 0.78–0.90); below this a vector hit is noise.
DENSE_MIN_COSINE = 0.75
# RAM for loaded owner matrices, all owners together (1.5 KB per memory at 384 dimensions: ~170k
# memories). Past it the least recently searched owners are dropped and reloaded on their next search
# (~35 ms per 10k memories), so a gateway serving many people for months does not grow without bound.
VECTOR_CACHE_BYTES = 256 * 2**20
# Semantic dedup: 0.99 is the lowest cosine with no wrong guarded merge (bench/README.md, "Dedup threshold").
SEMANTIC_DUP_COSINE = 0.99
QUERY_EMBED_TIMEOUT_SECONDS = 1.0
WARM_UP_TIMEOUT_SECONDS = 60.0  # a cold start reads the model file from disk


class MemoryEmbedder(Protocol):
    """What the engine needs of an embedder (``embedding_cache.CachedEmbedder`` is the one in use).

    ``model_key`` names model and dimension: stored vectors of another key are never compared.
    ``uses_local_cores``: embedding competes with SQLite and Python for this machine's cores (see ``_rank``).
    """

    model_key: str
    uses_local_cores: bool

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    async def embed_query(self, text: str) -> np.ndarray: ...

    async def close(self) -> None: ...


class MemoryDatabaseError(RuntimeError):
    """The memory database is missing, corrupt, or of an unknown schema; the message says which."""


def _row_to_memory(row: Sequence) -> Memory:
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


def _row_to_event(row: Sequence) -> Event:
    return Event(*row[:7], is_compressed=bool(row[7]), created_at=row[8], source_ref=row[9])


def _prepare_file(path: str) -> None:
    """Open synchronously once: WAL, then forward migrations. Raises MemoryDatabaseError on bad files."""
    try:
        conn = sqlite3.connect(path, isolation_level=None)
    except sqlite3.Error as exc:
        raise MemoryDatabaseError(f"cannot open memory database {path}: {exc}") from exc
    try:
        conn.execute("PRAGMA busy_timeout = 5000")
        check_version(conn)  # refuse a newer file before changing anything in it
        conn.execute("PRAGMA journal_mode = WAL")
        old, new = migrate(conn)
        if old != new:
            log.info("[memory] schema of %s upgraded from version %d to %d", path, old, new)
    except sqlite3.DatabaseError as exc:
        raise MemoryDatabaseError(f"{path} is not a usable memory database ({exc})") from exc
    except RuntimeError as exc:
        raise MemoryDatabaseError(str(exc)) from exc
    finally:
        conn.close()


class MemoryEngine:
    """Async access to the tiered memory store. Create with ``await MemoryEngine.open(path)``."""

    def __init__(self, db: aiosqlite.Connection, path: str) -> None:
        self._db = db
        self.path = path
        self._write_lock = asyncio.Lock()
        self._projects: dict[str, frozenset[str]] = {}
        self._indexed_rows = 0
        # Document frequencies read from the FTS vocabulary, reused until enough rows changed that they
        # may be off by more than a few percent (idf moves slowly; the lookup costs ~0.3 ms per query).
        self._df_cache: dict[str, int] = {}
        self._df_cache_rows = 0
        # Embeddings (issue 5): the embedder (None = FTS only), and each owner's vector matrix, loaded on
        # first use, appended to by inserts, dropped on other changes (archive, supersede, edit, purge,
        # backfill, another process's commit). Every vector hit is re-read from SQLite as live.
        self.embedder: MemoryEmbedder | None = None
        self._vectors: OrderedDict[str, OwnerVectors] = OrderedDict()  # least recently searched first
        self.vector_cache_bytes = VECTOR_CACHE_BYTES
        self._vectors_model_key = ""  # the model the cached matrices belong to
        self._vectors_data_version = -1  # SQLite data_version when they were loaded (other processes)
        self._embedding_failing = False
        # Called when rows were stored without a vector (the gateway wakes its backfill with it).
        self.on_vectors_missing: Callable[[], None] | None = None
        # How long a reply may wait for its query embedding before retrieval goes keyword-only.
        self.query_embed_timeout = QUERY_EMBED_TIMEOUT_SECONDS

    # ----------------------------------------------------------------- lifecycle

    @classmethod
    async def open(cls, path: str | Path, *, create: bool = True) -> MemoryEngine:
        """Open (and create or upgrade) the database at ``path``; jieba is loaded off the event loop."""
        path = str(path)
        if path == ":memory:" or path.startswith("file:"):
            raise MemoryDatabaseError("the memory database must be a file path (':memory:' is not supported)")
        target = Path(path)
        if not create and not target.exists():
            raise MemoryDatabaseError(f"memory database {path} does not exist")
        target.parent.mkdir(parents=True, exist_ok=True)
        await asyncio.gather(asyncio.to_thread(_prepare_file, path), asyncio.to_thread(tokenizer.warm_up))
        db = await aiosqlite.connect(path, isolation_level=None)
        engine = cls(db, path)
        try:
            await db.execute("PRAGMA busy_timeout = 5000")
            await db.execute("PRAGMA synchronous = NORMAL")
            await db.execute("PRAGMA foreign_keys = ON")
            engine._indexed_rows = await engine._scalar("SELECT COUNT(*) FROM memories")
        except BaseException:
            await db.close()
            raise
        log.info("[memory] opened %s", path)
        return engine

    async def close(self) -> None:
        """Close the connection (WAL is checkpointed by SQLite on the last close)."""
        await self._db.close()

    async def __aenter__(self) -> MemoryEngine:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ----------------------------------------------------------------- for sibling modules

    # The buffer, sessions and job log share this one connection. Every write must hold the write lock:
    # a statement run while ``write_many`` has BEGIN open would join (and roll back with) its transaction.

    async def fetchall(self, sql: str, params: Sequence = ()) -> list[sqlite3.Row | tuple]:
        """Run a read-only statement on the engine's connection (for memory/ modules, not callers)."""
        return await self._fetchall(sql, params)

    async def execute_write(self, sql: str, params: Sequence = ()) -> int:
        """Run one write statement under the write lock; returns lastrowid (or rowcount for updates)."""
        async with self._write_lock:
            cur = await self._db.execute(sql, params)
        return int(cur.lastrowid or 0) if sql.lstrip().upper().startswith("INSERT") else int(cur.rowcount)

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """Hold the write lock and one IMMEDIATE transaction; commits on success, rolls back on error."""
        async with self._write_lock:
            await self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                await self._db.execute("COMMIT")
            except BaseException:
                await self._db.execute("ROLLBACK")
                raise

    async def _scalar(self, sql: str, params: Sequence = ()) -> int:
        rows = await self._db.execute_fetchall(sql, params)
        return int(rows[0][0] or 0) if rows else 0

    async def _fetchall(self, sql: str, params: Sequence = ()) -> list[sqlite3.Row | tuple]:
        # One hop to the database thread (execute + fetch + close) instead of three: hops, not SQL,
        # dominate the reply path's memory cost (bench/gateway_throughput.py).
        return list(await self._db.execute_fetchall(sql, params))

    def _changed(self, owner: str) -> None:
        """Forget what is cached about the owner's memories (known projects, vector matrix)."""
        self._projects.pop(owner, None)
        self._vectors.pop(owner, None)

    # ----------------------------------------------------------------- writes

    async def write(
        self, owner: str, fact: Fact, now: datetime | None = None, *, embed: bool = True
    ) -> WriteResult:
        """Store one fact through the clean path (merge duplicates, supersede same subject+predicate)."""
        return (await self.write_many(owner, [fact], now=now, embed=embed))[0]

    async def write_many(
        self, owner: str, facts: Iterable[Fact], now: datetime | None = None, *, embed: bool = True
    ) -> list[WriteResult]:
        """Store several facts in one transaction, each through the clean path.

        With an embedder, the facts are embedded first (outside the write lock) so that each row gets
        its vector and a fact that means the same as a live memory merges into it (semantic dedup).
        ``embed=False`` is for writes someone waits on (``/remember``): the row is stored at once
        without a vector and the background backfill embeds it. An embedder failure never fails a
        write: the rows are stored without vectors and backfilled later.
        """
        _check_owner(owner)
        checked = [_validated(fact) for fact in facts]
        vectors = await self._passage_vectors([f.content for f in checked]) if embed else None
        results: list[WriteResult] = []
        async with self._write_lock:
            await self._db.execute("BEGIN IMMEDIATE")
            try:
                if vectors is not None:
                    await self._drop_vectors_if_others_wrote()  # once, not per fact: we hold the lock now
                for index, fact in enumerate(checked):
                    vector = vectors[index] if vectors is not None else None
                    results.append(await self._write_one(owner, fact, now or utcnow(), vector))
                await self._db.execute("COMMIT")
            except BaseException:
                await self._db.execute("ROLLBACK")
                self._changed(owner)
                raise
        # Inserted rows were appended to a loaded vector matrix and merges change no vector, so the
        # matrix stays right; reloading it (~30 ms at 10k) would land on the next reply. A supersede
        # archives rows, so then it is dropped.
        self._projects.pop(owner, None)
        if any(r.action == "superseded" for r in results):
            self._changed(owner)
        if self.embedder is not None and vectors is None and any(r.action != "merged" for r in results):
            self._vectors_missing()
        for r in results:
            log.info("[memory] write owner=%s id=%d action=%s", owner, r.id, r.action)
        return results

    async def _passage_vectors(self, texts: list[str]) -> np.ndarray | None:
        """Vectors for texts about to be written, or None (no embedder, or it failed: backfill later)."""
        embedder = self.embedder
        if embedder is None or not texts:
            return None
        try:
            vectors = await embedder.embed_passages(texts)
        except Exception as exc:  # EmbeddingError, or anything else: a write must not fail for a vector
            self._embedding_failed("embedding new memories", exc)
            return None
        self._embedding_recovered()
        return vectors

    def _embedding_failed(self, what: str, exc: BaseException) -> None:
        """Log the first failure of a streak only: a dead API must not flood the log on every message."""
        if not self._embedding_failing:
            log.warning(
                "[memory] %s failed (%s: %s); keyword search only, vectors are filled in later",
                what,
                type(exc).__name__,
                str(exc)[:200],
            )
        self._embedding_failing = True

    def _embedding_recovered(self) -> None:
        if self._embedding_failing:
            log.info("[memory] embeddings work again")
        self._embedding_failing = False

    def _vectors_missing(self) -> None:
        """Tell the backfill (if one is attached) that some live memories have no vector yet."""
        if self.on_vectors_missing is not None:
            self.on_vectors_missing()

    async def _write_one(
        self, owner: str, fact: Fact, now: datetime, vector: np.ndarray | None = None
    ) -> WriteResult:
        key = norm_key(fact.content)
        if fact.subject and fact.predicate:
            rows = await self._fetchall(
                "SELECT id, norm_key FROM memories WHERE owner = ? AND subject = ? AND predicate = ? "
                "AND is_archived = 0 ORDER BY id DESC",
                (owner, fact.subject, fact.predicate),
            )
            for old_id, old_key in rows:
                if old_key == key:
                    return await self._merge_into(old_id, fact, now)
            if rows:
                new_id = await self._insert(owner, fact, key, now, vector)
                await self._db.executemany(
                    "UPDATE memories SET is_archived = 1, superseded_by = ?, updated_at = ? WHERE id = ?",
                    [(new_id, to_db(now), old_id) for old_id, _ in rows],
                )
                return WriteResult(new_id, "superseded", rows[0][0])
        same = await self._fetchall(
            "SELECT id FROM memories WHERE owner = ? AND norm_key = ? AND is_archived = 0 AND tier = ? "
            "LIMIT 1",
            (owner, key, fact.tier),
        )
        if same:
            return await self._merge_into(same[0][0], fact, now)
        near = await self._near_duplicate(owner, fact)
        if near is None and vector is not None:
            near = await self._semantic_duplicate(owner, fact, vector)
        if near is not None:
            return await self._merge_into(near, fact, now)
        return WriteResult(await self._insert(owner, fact, key, now, vector), "inserted")

    async def _semantic_duplicate(self, owner: str, fact: Fact, vector: np.ndarray) -> int | None:
        """A live memory of the same tier whose vector says the same thing (cosine ≥ SEMANTIC_DUP_COSINE).

        The guard (``merge_guard.guard_allows_merge``) vetoes pairs whose numbers, dates or names differ: the
        embedding model scores "met Anna on 7 May" and "met Anna on 2 June" as near-identical, and
        merging them would lose a fact.
        """
        assert self.embedder is not None
        vectors = await self._owner_vectors(owner, self.embedder.model_key, check_others=False)
        for cand_id, cosine in vectors.top(vector, 3, (fact.tier,)):
            if cosine < SEMANTIC_DUP_COSINE:
                break
            # Still live, and still holding this model's vector (an edit elsewhere clears it): a stale
            # cached vector can then never pull a new fact into a row that now says something else.
            rows = await self._fetchall(
                "SELECT content FROM memories WHERE id = ? AND owner = ? AND is_archived = 0 AND tier = ? "
                "AND embedding_model = ? AND embedding IS NOT NULL",
                (cand_id, owner, fact.tier, self.embedder.model_key),
            )
            if rows and guard_allows_merge(fact.content, rows[0][0]):
                return cand_id
        return None

    async def _near_duplicate(self, owner: str, fact: Fact) -> int | None:
        """A live memory of the same tier that says nearly the same thing, if any.

        A near duplicate (Dice >= 0.85 of content words) shares almost every word, so it must contain
        the fact's rarest terms: an AND of the two rarest is a short posting-list walk even at 100k rows,
        where an OR of every term would score thousands of rows on each write.
        """
        words = content_words(fact.content)
        if not words:
            return None
        weights = await self._term_weights(tokenizer.query_terms(fact.content))
        rarest = sorted((t for t in weights if t in words), key=lambda t: -weights[t])[:NEAR_DUP_TERMS]
        if not rarest:
            return None
        rows = await self._fetchall(
            "SELECT m.id, m.content FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid "
            "WHERE memories_fts MATCH ? AND m.owner = ? AND m.is_archived = 0 AND m.tier = ? "
            "ORDER BY bm25(memories_fts) LIMIT 5",
            (" AND ".join(tokenizer.quote_term(t) for t in rarest), owner, fact.tier),
        )
        for cand_id, cand_content in rows:
            if is_near_duplicate(words, content_words(cand_content)):
                return int(cand_id)
        return None

    async def _insert(
        self, owner: str, fact: Fact, key: str, now: datetime, vector: np.ndarray | None = None
    ) -> int:
        created = to_db(fact.created_at or now)
        search_text = tokenizer.index_text(fact.content)
        self._forget_df(search_text)
        cur = await self._db.execute(
            "INSERT INTO memories (owner, tier, project, topic, category, content, search_text, norm_key, "
            "importance, source, source_ref, subject, predicate, created_at, updated_at, last_accessed, "
            "embedding, embedding_model) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                owner,
                fact.tier,
                fact.project,
                fact.topic,
                fact.category,
                fact.content,
                search_text,
                key,
                fact.importance,
                fact.source,
                fact.source_ref,
                fact.subject,
                fact.predicate,
                created,
                created,
                created,
                vector_to_blob(vector) if vector is not None else None,
                self.embedder.model_key if vector is not None and self.embedder is not None else None,
            ),
        )
        new_id = int(cur.lastrowid)
        if vector is not None and self.embedder is not None:
            # Later facts of the same transaction must see this row (a batch may repeat itself).
            vectors = self._vectors.get(owner)
            if vectors is not None:
                vectors.append(new_id, fact.tier, vector)
        if fact.source_ref:
            await self._db.execute(
                "INSERT OR IGNORE INTO memory_refs(memory_id, ref) VALUES (?, ?)", (new_id, fact.source_ref)
            )
        self._indexed_rows += 1
        return new_id

    def _forget_df(self, search_text: str) -> None:
        """Drop cached frequencies of a written text's terms: a new word must be matchable at once."""
        for term in set(search_text.split()):
            self._df_cache.pop(term, None)

    async def _merge_into(self, memory_id: int, fact: Fact, now: datetime) -> WriteResult:
        await self._db.execute(
            "UPDATE memories SET access_count = access_count + 1, importance = MAX(importance, ?), "
            "updated_at = ? WHERE id = ?",
            (fact.importance, to_db(now), memory_id),
        )
        if fact.source_ref:
            await self._db.execute(
                "INSERT OR IGNORE INTO memory_refs(memory_id, ref) VALUES (?, ?)",
                (memory_id, fact.source_ref),
            )
        return WriteResult(memory_id, "merged")

    async def edit(
        self,
        owner: str,
        memory_id: int,
        *,
        content: str | None = None,
        project: str | None = None,
        topic: str | None = None,
        category: str | None = None,
        importance: float | None = None,
        tier: int | None = None,
    ) -> Memory:
        """Change fields of one live memory the owner has; raises KeyError when there is none."""
        current = await self.get(owner, memory_id)
        if current is None or current.is_archived:
            raise KeyError(f"no live memory {memory_id} for this owner")
        fact = _validated(
            Fact(
                content=content if content is not None else current.content,
                project=project or current.project,
                topic=topic or current.topic,
                category=category or current.category,
                importance=importance if importance is not None else current.importance,
                tier=tier or current.tier,
            )
        )
        self._forget_df(tokenizer.index_text(fact.content))
        async with self._write_lock:
            await self._db.execute(
                "UPDATE memories SET content = ?, search_text = ?, norm_key = ?, project = ?, topic = ?, "
                "category = ?, importance = ?, tier = ?, updated_at = ?, "
                "embedding = CASE WHEN content = ? THEN embedding END, "
                "embedding_model = CASE WHEN content = ? THEN embedding_model END "
                "WHERE id = ? AND owner = ?",
                (
                    fact.content,
                    tokenizer.index_text(fact.content),
                    norm_key(fact.content),
                    fact.project,
                    fact.topic,
                    fact.category,
                    fact.importance,
                    fact.tier,
                    to_db(utcnow()),
                    fact.content,
                    fact.content,
                    memory_id,
                    owner,
                ),
            )
        self._changed(owner)
        if fact.content != current.content and self.embedder is not None:
            self._vectors_missing()  # the old vector described the old text: the backfill re-embeds it
        log.info("[memory] edit owner=%s id=%d", owner, memory_id)
        updated = await self.get(owner, memory_id)
        assert updated is not None
        return updated

    async def archive(self, owner: str, memory_id: int) -> bool:
        """Soft-delete one memory of the owner; False when the owner has no such live memory."""
        async with self._write_lock:
            cur = await self._db.execute(
                "UPDATE memories SET is_archived = 1, updated_at = ? WHERE id = ? AND owner = ? "
                "AND is_archived = 0",
                (to_db(utcnow()), memory_id, owner),
            )
        done = cur.rowcount > 0
        if done:
            self._changed(owner)
            log.info("[memory] archive owner=%s id=%d", owner, memory_id)
        return done

    async def purge(self, owner: str, memory_id: int) -> bool:
        """Delete one memory of the owner for good (the explicit exception to soft delete)."""
        async with self._write_lock:
            await self._db.execute(
                "UPDATE memories SET superseded_by = NULL WHERE superseded_by = ? AND owner = ?",
                (memory_id, owner),
            )
            content = await self._db.execute_fetchall(
                "SELECT content FROM memories WHERE id = ? AND owner = ?", (memory_id, owner)
            )
            cur = await self._db.execute(
                "DELETE FROM memories WHERE id = ? AND owner = ?", (memory_id, owner)
            )
            if content:  # "for good": the cached vector of the exact text goes too
                digest = text_hash(str(content[0][0]))
                await self._db.execute("DELETE FROM embedding_cache WHERE text_hash = ?", (digest,))
        done = cur.rowcount > 0
        if done:
            self._indexed_rows -= 1
            self._changed(owner)
            log.info("[memory] purge owner=%s id=%d", owner, memory_id)
        return done

    # ----------------------------------------------------------------- reads

    async def get(self, owner: str, memory_id: int) -> Memory | None:
        """One memory of the owner (live or archived), with all its source references."""
        rows = await self._fetchall(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE id = ? AND owner = ?", (memory_id, owner)
        )
        if not rows:
            return None
        mem = _row_to_memory(rows[0])
        mem.refs = (await self.refs(owner, [mem.id])).get(mem.id, [])
        return mem

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
        """The owner's memories, newest first, optionally filtered by tier and project."""
        where, params = ["owner = ?"], [owner]
        if tier is not None:
            where.append("tier = ?")
            params.append(tier)
        if project is not None:
            where.append("project = ?")
            params.append(project)
        if not include_archived:
            where.append("is_archived = 0")
        rows = await self._fetchall(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE {' AND '.join(where)} "
            "ORDER BY id DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        mems = [_row_to_memory(r) for r in rows]
        refs = await self.refs(owner, [m.id for m in mems])
        for m in mems:
            m.refs = refs.get(m.id, [])
        return mems

    async def refs(self, owner: str, memory_ids: Sequence[int]) -> dict[int, list[str]]:
        """Every source reference each memory absorbed (its own plus those of merged duplicates)."""
        out: dict[int, list[str]] = {}
        for chunk_start in range(0, len(memory_ids), 500):
            chunk = list(memory_ids[chunk_start : chunk_start + 500])
            marks = ",".join("?" * len(chunk))
            rows = await self._fetchall(
                f"SELECT r.memory_id, r.ref FROM memory_refs r JOIN memories m ON m.id = r.memory_id "
                f"WHERE m.owner = ? AND r.memory_id IN ({marks}) ORDER BY r.ref",
                (owner, *chunk),
            )
            for mid, ref in rows:
                out.setdefault(mid, []).append(ref)
        return out

    async def profile(self, owner: str, limit: int = 100) -> list[Memory]:
        """Tier 1, the core profile that is always in the system prompt (most important first)."""
        rows = await self._fetchall(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE owner = ? AND tier = 1 AND is_archived = 0 "
            "ORDER BY importance DESC, id LIMIT ?",
            (owner, limit),
        )
        return [_row_to_memory(r) for r in rows]

    async def profile_text(self, owner: str, limit: int = 100) -> str:
        """Tier 1 as a Markdown list for the system prompt; empty when the profile is empty."""
        return "\n".join(f"- {m.content}" for m in await self.profile(owner, limit))

    async def top_memories(self, owner: str, limit: int = 10, now: datetime | None = None) -> list[Memory]:
        """The owner's live Tier 2 memories that weigh most now (importance after category decay).

        Used by ``/memory``, which has no query to rank by: what the assistant would recall first.
        """
        now = now or utcnow()
        rows = await self._fetchall(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE owner = ? AND tier = 2 AND is_archived = 0",
            (owner,),
        )
        mems = [_row_to_memory(r) for r in rows]

        def weight(m: Memory) -> tuple[float, int]:
            return -relevance_score(m.category, m.importance, days_between(m.last_accessed, now)), -m.id

        mems.sort(key=weight)
        return mems[:limit]

    async def known_projects(self, owner: str) -> frozenset[str]:
        """Project names the owner's live memories use (cached until the owner's next write)."""
        cached = self._projects.get(owner)
        if cached is None:
            rows = await self._fetchall(
                "SELECT DISTINCT project FROM memories WHERE owner = ? AND tier = 2 AND is_archived = 0",
                (owner,),
            )
            cached = frozenset(r[0] for r in rows if r[0] != GLOBAL_PROJECT)
            self._projects[owner] = cached
        return cached

    async def stats(self, owner: str | None = None) -> dict[str, int]:
        """Row counts per tier, archived, events and buffered turns (one owner, or all when None)."""
        cond, params = ("WHERE owner = ?", (owner,)) if owner is not None else ("", ())
        counts: dict[str, int] = {}
        rows = await self._fetchall(
            f"SELECT tier, is_archived, COUNT(*) FROM memories {cond} GROUP BY tier, is_archived", params
        )
        counts["tier1"] = sum(n for t, a, n in rows if t == 1 and not a)
        counts["tier2"] = sum(n for t, a, n in rows if t == 2 and not a)
        counts["archived"] = sum(n for _, a, n in rows if a)
        counts["tier3_events"] = await self._scalar(f"SELECT COUNT(*) FROM daily_events {cond}", params)
        counts["buffered_turns"] = await self._scalar(
            f"SELECT COUNT(*) FROM extraction_buffer {cond}", params
        )
        counts["owners"] = await self._scalar(
            f"SELECT COUNT(*) FROM (SELECT owner FROM memories {cond} "
            f"UNION SELECT owner FROM daily_events {cond})",
            params * 2,
        )
        return counts

    async def owners(self) -> list[str]:
        """Every owner that has memories or events (for export and the CLI)."""
        rows = await self._fetchall(
            "SELECT owner FROM memories UNION SELECT owner FROM daily_events ORDER BY 1"
        )
        return [r[0] for r in rows]

    # ----------------------------------------------------------------- retrieval

    async def retrieve(
        self,
        owner: str,
        text: str,
        now: datetime | None = None,
        *,
        k: int = 5,
        min_match: float = 0.0,
        touch: bool = True,
    ) -> list[Retrieved]:
        """Tier 2 memories for a message: project partition + FTS5 (+ vectors), ranked, top ``k``, touched.

        With an embedder the query is embedded (bounded by ``query_embed_timeout``; on failure or
        timeout this query is keyword-only and the failure is logged once) and the cosine ranking is
        fused with the keyword ranking. ``min_match`` drops keyword-only hits whose idf-weighted share
        of the query's terms is below it, so that a permissive gate does not inject noise.
        ``touch=False`` leaves access times alone (benchmarks use it so that the order of queries does
        not change the ranking).
        """
        hits = await self._rank(owner, text, now or utcnow(), tiers=(2,), k=k, min_match=min_match)
        if hits and touch:
            await self._touch([h.id for h in hits], now or utcnow())
            log.info("[memory] retrieve owner=%s hits=%d", owner, len(hits))
        return hits

    async def search(
        self, owner: str, query: str, k: int = 10, *, tiers: tuple[int, ...] = (1, 2)
    ) -> list[Retrieved]:
        """Memories matching ``query`` for browsing (CLI, model tool): ranked like retrieve, not touched."""
        return await self._rank(owner, query, utcnow(), tiers=tiers, k=k, min_match=0.0)

    async def warm_up_embedder(self) -> bool:
        """Load the embedding model now (at start) so the first reply does not pay for it."""
        return await self._query_vector("warm up", timeout=WARM_UP_TIMEOUT_SECONDS) is not None

    async def _query_vector(self, text: str, timeout: float | None = None) -> np.ndarray | None:
        """The query's vector, or None (no embedder, empty text, or it failed / was too slow)."""
        embedder = self.embedder
        text = text[: tokenizer.MAX_QUERY_CHARS].strip()
        if embedder is None or not text:
            return None
        try:
            # asyncio.timeout, not wait_for: wait_for (3.11) can swallow the reply task's own cancel.
            async with asyncio.timeout(timeout or self.query_embed_timeout):
                vector = await embedder.embed_query(text)
        except Exception as exc:  # EmbeddingError, TimeoutError, anything: retrieval must still answer
            self._embedding_failed("embedding a query", exc)
            return None
        self._embedding_recovered()
        return vector

    async def _rank(
        self,
        owner: str,
        text: str,
        now: datetime,
        *,
        tiers: tuple[int, ...],
        k: int,
        min_match: float,
    ) -> list[Retrieved]:
        _check_owner(owner)
        # An API embedding runs while SQLite finds the keyword candidates: the slower of the two sets
        # the latency, not their sum. The local model is waited for first: its OpenMP threads use every
        # core, and an SQLite query running beside them stalls each of their parallel steps (measured at
        # 10k memories on 2 cores: p95 18 ms one after the other, 23 ms overlapped).
        embedder = self.embedder
        vector_task = asyncio.ensure_future(self._query_vector(text)) if embedder is not None else None
        try:
            if vector_task is not None and embedder is not None and embedder.uses_local_cores:
                await asyncio.wait([vector_task])
            return await self._rank_with(owner, text, now, tiers, k, min_match, vector_task)
        finally:
            if vector_task is not None and not vector_task.done():
                vector_task.cancel()

    async def _rank_with(
        self,
        owner: str,
        text: str,
        now: datetime,
        tiers: tuple[int, ...],
        k: int,
        min_match: float,
        vector_task: asyncio.Future[np.ndarray | None] | None,
    ) -> list[Retrieved]:
        lowered = text[: tokenizer.MAX_QUERY_CHARS].lower()
        window, without_date = find_window(lowered, now)
        terms = tokenizer.query_terms(without_date)
        project = _match_project(lowered, terms, await self.known_projects(owner))
        weights = await self._term_weights(terms)
        fts_rows = await self._fts_candidates(
            owner, terms, tiers=tiers, limit=FTS_CANDIDATES, weights=weights
        )
        if window is not None:
            fts_rows += await self._fts_candidates(
                owner, terms, tiers=tiers, limit=FTS_CANDIDATES, weights=weights, window=window
            )
        best = min((r[-1] for r in fts_rows), default=0.0)
        # id -> (row, normalised bm25 in (0, 1], lowest text score the row may get)
        candidates: dict[int, tuple[Sequence, float, float]] = {}
        for row in fts_rows:
            candidates[row[0]] = (row, (row[-1] / best) if best < 0 else 0.0, 0.0)
        extra: list[tuple[list[Sequence], float]] = []
        if project is not None:
            extra.append((await self._partition_rows(owner, project, tiers), PARTITION_ONLY_TEXT))
        if window is not None:
            extra.append((await self._window_rows(owner, window, tiers), WINDOW_ONLY_TEXT))
        dense_rank: dict[int, int] = {}
        query_vector = await vector_task if vector_task is not None else None
        if query_vector is not None and self.embedder is not None:
            vectors = await self._owner_vectors(owner, self.embedder.model_key)
            dense = [
                memory_id
                for memory_id, cosine in vectors.top(query_vector, DENSE_CANDIDATES, tiers)
                if cosine >= DENSE_MIN_COSINE
            ]
            dense_rank = {memory_id: rank for rank, memory_id in enumerate(dense, start=1)}
            unseen = [i for i in dense if i not in candidates]
            if unseen:
                extra.append((await self._rows_by_id(owner, unseen), 0.0))
        for rows, floor in extra:
            for row in rows:
                candidates.setdefault(row[0], (row, 0.0, floor))
        total_weight = sum(weights.values()) or 1.0
        query_seq = tokenizer.query_tokens(without_date)
        query_pairs = set(itertools.pairwise(query_seq))
        scored: list[tuple[Sequence, float, float, float]] = []  # row, text score, match, decay
        for row, bm25_share, floor in candidates.values():
            tokens = row[10].split()
            words = set(tokens)
            match = sum(w for t, w in weights.items() if t in words) / total_weight
            if match < min_match and row[0] not in dense_rank:
                continue
            proximity = len(query_pairs.intersection(itertools.pairwise(tokens)))
            text_score = (bm25_share + COVERAGE_WEIGHT * match) / (1.0 + COVERAGE_WEIGHT)
            text_score = max(text_score * (1.0 + PROXIMITY_WEIGHT * proximity), floor)
            if window is not None and _in_window(row[8], window):
                text_score *= 1.0 + TIME_WINDOW_BOOST
            decay = relevance_score(row[5], row[7], days_between(row[9], now))
            scored.append((row, text_score, match, decay))
        if dense_rank:
            fused = _fuse_ranks(scored, dense_rank)
        else:
            fused = {row[0]: text_score for row, text_score, _, _ in scored}
        hits = [
            Retrieved(
                id=row[0],
                content=row[6],
                tier=row[2],
                project=row[3],
                topic=row[4],
                category=row[5],
                importance=row[7],
                created_at=row[8],
                score=fused[row[0]] * (1.0 + DECAY_WEIGHT * decay),
                match=match,
            )
            for row, _, match, decay in scored
        ]
        hits.sort(key=lambda h: (-h.score, -h.id))
        return hits[:k]

    async def _rows_by_id(self, owner: str, ids: Sequence[int]) -> list[Sequence]:
        """Candidate rows (same layout as the partition rows) for memories found by their vectors."""
        return await self._fetchall(
            "SELECT id, owner, tier, project, topic, category, content, importance, created_at, "
            # "+owner", "+is_archived": look the ids up by primary key, not through an owner index
            f"last_accessed, search_text, 0.0 FROM memories WHERE +owner = ? AND +is_archived = 0 "
            f"AND id IN ({','.join('?' * len(ids))})",
            (owner, *ids),
        )

    async def _term_weights(self, terms: tuple[str, ...]) -> dict[str, float]:
        """idf of each term over the whole index (df 0 for a term no memory has: the highest weight)."""
        if not terms:
            return {}
        if abs(self._indexed_rows - self._df_cache_rows) > max(50, self._df_cache_rows // 20):
            self._df_cache.clear()
            self._df_cache_rows = self._indexed_rows
        missing = [t for t in terms if t not in self._df_cache]
        if missing:
            marks = ",".join("?" * len(missing))
            rows = await self._fetchall(
                f"SELECT term, doc FROM memories_vocab WHERE term IN ({marks})", missing
            )
            self._df_cache.update(dict.fromkeys(missing, 0) | {t: int(d) for t, d in rows})
        df = {t: self._df_cache[t] for t in terms}
        n = max(self._indexed_rows, 1)
        return {t: math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}

    async def _fts_candidates(
        self,
        owner: str,
        terms: tuple[str, ...],
        *,
        tiers: tuple[int, ...],
        limit: int,
        weights: dict[str, float] | None = None,
        window: TimeWindow | None = None,
    ) -> list[Sequence]:
        """FTS5 rows of the owner's live memories matching any term, best bm25 first.

        Row layout: id, tier, project, topic, category... see the SELECT; the last two columns are
        search_text and bm25 (negative, lower is better).
        """
        if weights is None:
            weights = await self._term_weights(terms)
        selected, all_common = _selective_terms(weights, self._indexed_rows)
        if not selected:
            return []
        # All-common terms: take the newest matches (FTS5 walks its doclist by rowid and stops early)
        # instead of scoring every match; bm25 then orders that sample.
        order = "memories_fts.rowid DESC" if all_common else "b"
        tier_marks = ",".join("?" * len(tiers))
        when, when_params = "", ()
        if window is not None:
            when, when_params = "AND m.created_at >= ? AND m.created_at < ? ", _window_bounds(window)
        return await self._fetchall(
            "SELECT m.id, m.owner, m.tier, m.project, m.topic, m.category, m.content, m.importance, "
            "m.created_at, m.last_accessed, m.search_text, bm25(memories_fts) AS b "
            "FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid "
            f"WHERE memories_fts MATCH ? AND m.owner = ? AND m.is_archived = 0 AND m.tier IN ({tier_marks}) "
            f"{when}ORDER BY {order} LIMIT ?",
            (tokenizer.match_expression(selected), owner, *tiers, *when_params, limit),
        )

    async def _window_rows(self, owner: str, window: TimeWindow, tiers: tuple[int, ...]) -> list[Sequence]:
        """The owner's most important memories written inside ``window`` (for time-only questions)."""
        tier_marks = ",".join("?" * len(tiers))
        return await self._fetchall(
            "SELECT id, owner, tier, project, topic, category, content, importance, created_at, "
            f"last_accessed, search_text, 0.0 FROM memories WHERE owner = ? AND tier IN ({tier_marks}) "
            "AND is_archived = 0 AND created_at >= ? AND created_at < ? "
            "ORDER BY importance DESC, id DESC LIMIT ?",
            (owner, *tiers, *_window_bounds(window), PARTITION_CANDIDATES),
        )

    async def _partition_rows(self, owner: str, project: str, tiers: tuple[int, ...]) -> list[Sequence]:
        tier_marks = ",".join("?" * len(tiers))
        return await self._fetchall(
            "SELECT id, owner, tier, project, topic, category, content, importance, created_at, "
            f"last_accessed, search_text, 0.0 FROM memories WHERE owner = ? AND tier IN ({tier_marks}) "
            "AND project = ? AND is_archived = 0 ORDER BY importance DESC, id DESC LIMIT ?",
            (owner, *tiers, project, PARTITION_CANDIDATES),
        )

    async def _touch(self, ids: list[int], now: datetime) -> None:
        marks = ",".join("?" * len(ids))
        async with self._write_lock:
            await self._db.execute(
                "UPDATE memories SET last_accessed = ?, access_count = access_count + 1 "
                f"WHERE id IN ({marks})",
                (to_db(now), *ids),
            )

    # ----------------------------------------------------------------- embeddings

    async def missing_embeddings(
        self, model_key: str, *, after_id: int = 0, limit: int = 256, owner: str | None = None
    ) -> list[tuple[int, str, str]]:
        """Live memories without a ``model_key`` vector: (id, owner, content) in id order after ``after_id``.

        For the background backfill and ``tierclaw memory reindex``: walking by id makes both resumable.
        """
        where, params = "", ()
        if owner is not None:
            where, params = "AND owner = ? ", (owner,)
        rows = await self._fetchall(
            "SELECT id, owner, content FROM memories WHERE is_archived = 0 AND id > ? "
            f"AND (embedding_model IS NOT ? OR embedding IS NULL) {where}ORDER BY id LIMIT ?",
            (after_id, model_key, *params, limit),
        )
        return [(int(i), str(o), str(c)) for i, o, c in rows]

    async def count_missing_embeddings(self, model_key: str, owner: str | None = None) -> int:
        """How many live memories have no vector of ``model_key`` (what a reindex still has to do)."""
        where, params = "", ()
        if owner is not None:
            where, params = "AND owner = ? ", (owner,)
        return await self._scalar(
            "SELECT COUNT(*) FROM memories WHERE is_archived = 0 "
            f"AND (embedding_model IS NOT ? OR embedding IS NULL) {where}",
            (model_key, *params),
        )

    async def set_embeddings(self, model_key: str, items: Sequence[tuple[int, str, np.ndarray]]) -> int:
        """Store vectors for memories given as (id, the content that was embedded, vector).

        A row whose content changed since it was read (an edit in between) is left alone: its vector
        would describe the old text, and the next backfill picks it up again. Returns rows updated.
        """
        if not items:
            return 0
        async with self._write_lock:
            cur = await self._db.executemany(
                "UPDATE memories SET embedding = ?, embedding_model = ? WHERE id = ? AND content = ?",
                [(vector_to_blob(v), model_key, int(i), content) for i, content, v in items],
            )
            owners = await self._db.execute_fetchall(
                f"SELECT DISTINCT owner FROM memories WHERE id IN ({','.join('?' * len(items))})",
                [int(i) for i, _, _ in items],
            )
        for (owner,) in owners:
            self._vectors.pop(owner, None)
        return int(cur.rowcount)

    async def owner_vectors(self, owner: str) -> OwnerVectors | None:
        """The owner's live memory vectors under the current embedder (None without one).

        For jobs that compare memories with each other (the weekly merge clusters by similarity).
        """
        if self.embedder is None:
            return None
        return await self._owner_vectors(owner, self.embedder.model_key)

    async def _drop_vectors_if_others_wrote(self) -> None:
        """Drop every cached matrix when another connection committed since they were loaded."""
        version = await self._scalar("PRAGMA data_version")
        if version != self._vectors_data_version:
            self._vectors.clear()
            self._vectors_data_version = version

    async def _owner_vectors(self, owner: str, model_key: str, *, check_others: bool = True) -> OwnerVectors:
        """The owner's live memory vectors of ``model_key`` (tiers 1 and 2), loaded once per change.

        Changes made through this engine drop the matrix at once (``_changed``). Changes committed by
        another process (``tierclaw memory edit`` while the gateway runs) show in SQLite's
        ``data_version``, which is checked first: then every cached matrix is dropped.
        """
        if check_others:
            await self._drop_vectors_if_others_wrote()
        if model_key != self._vectors_model_key:
            self._vectors.clear()
            self._vectors_model_key = model_key
        vectors = self._vectors.get(owner)
        if vectors is not None:
            self._vectors.move_to_end(owner)
            return vectors
        rows = await self._fetchall(
            "SELECT id, tier, embedding FROM memories WHERE owner = ? AND is_archived = 0 "
            "AND embedding_model = ? AND embedding IS NOT NULL",
            (owner, model_key),
        )
        vectors = self._vectors[owner] = OwnerVectors.build(rows)
        self._evict_vectors()
        return vectors

    def _evict_vectors(self) -> None:
        """Drop the least recently searched owners' matrices while all of them exceed the RAM budget
        (the owner just loaded is kept, however large)."""
        total = sum(v.nbytes for v in self._vectors.values())
        while total > self.vector_cache_bytes and len(self._vectors) > 1:
            owner, dropped = self._vectors.popitem(last=False)
            total -= dropped.nbytes
            log.debug("[memory] vectors of owner=%s dropped from RAM (%d bytes)", owner, dropped.nbytes)

    # ----------------------------------------------------------------- tier 3

    async def add_event(
        self,
        owner: str,
        summary: str,
        *,
        event_date: date | str | None = None,
        channel: str = "unknown",
        sender_id: str = "",
        raw_tokens: int = 0,
        source_ref: str | None = None,
    ) -> int:
        """Write one Tier 3 daily event summary; returns its id."""
        _check_owner(owner)
        if not summary.strip():
            raise ValueError("an event summary must not be empty")
        day = (
            event_date.isoformat()
            if isinstance(event_date, date)
            else (event_date or utcnow().date().isoformat())
        )
        date.fromisoformat(day)  # raises ValueError on a malformed date
        async with self._write_lock:
            cur = await self._db.execute(
                "INSERT INTO daily_events (owner, event_date, channel, sender_id, summary, search_text, "
                "raw_tokens, source_ref) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    owner,
                    day,
                    channel,
                    sender_id,
                    summary,
                    tokenizer.index_text(summary),
                    raw_tokens,
                    source_ref,
                ),
            )
        log.info("[memory] event owner=%s id=%d date=%s", owner, cur.lastrowid, day)
        return int(cur.lastrowid)

    async def mark_events_compressed(self, owner: str, event_ids: Sequence[int]) -> int:
        """Flag Tier 3 events as folded into Tier 2 by the daily job; returns how many changed."""
        if not event_ids:
            return 0
        marks = ",".join("?" * len(event_ids))
        async with self._write_lock:
            cur = await self._db.execute(
                f"UPDATE daily_events SET is_compressed = 1 WHERE owner = ? AND id IN ({marks}) "
                "AND is_compressed = 0",
                (owner, *event_ids),
            )
        return int(cur.rowcount)

    async def events(
        self,
        owner: str,
        *,
        since: str | None = None,
        until: str | None = None,
        query: str | None = None,
        include_compressed: bool = True,
        source_ref: str | None = None,
        limit: int = 50,
    ) -> list[Event]:
        """Tier 3 events of the owner by date range (inclusive, YYYY-MM-DD), source_ref and/or keywords."""
        where, params = ["e.owner = ?"], [owner]
        if source_ref is not None:
            where.append("e.source_ref = ?")
            params.append(source_ref)
        if since:
            where.append("e.event_date >= ?")
            params.append(since)
        if until:
            where.append("e.event_date <= ?")
            params.append(until)
        if not include_compressed:
            where.append("e.is_compressed = 0")
        columns = ", ".join(f"e.{c.strip()}" for c in _EVENT_COLUMNS.split(","))
        if query:
            terms = tokenizer.query_terms(query)
            if not terms:
                return []
            sql = (
                f"SELECT {columns} FROM events_fts JOIN daily_events e ON e.id = events_fts.rowid "
                f"WHERE events_fts MATCH ? AND {' AND '.join(where)} ORDER BY bm25(events_fts) LIMIT ?"
            )
            params = [tokenizer.match_expression(terms), *params]
        else:
            sql = (
                f"SELECT {columns} FROM daily_events e WHERE {' AND '.join(where)} "
                "ORDER BY e.event_date DESC, e.id DESC LIMIT ?"
            )
        return [_row_to_event(r) for r in await self._fetchall(sql, (*params, limit))]

    # ----------------------------------------------------------------- for the compression jobs

    async def owners_with_uncompressed_events(self, until: date | str) -> list[str]:
        """Owners with Tier 3 events dated on or before ``until`` that the daily job has not compressed."""
        rows = await self._fetchall(
            "SELECT DISTINCT owner FROM daily_events WHERE is_compressed = 0 AND event_date <= ? "
            "ORDER BY owner",
            (_day(until),),
        )
        return [r[0] for r in rows]

    async def uncompressed_events(self, owner: str, until: date | str) -> list[Event]:
        """The owner's uncompressed Tier 3 events dated on or before ``until``, oldest first."""
        rows = await self._fetchall(
            f"SELECT {_EVENT_COLUMNS} FROM daily_events WHERE owner = ? AND is_compressed = 0 "
            "AND event_date <= ? ORDER BY event_date, id",
            (owner, _day(until)),
        )
        return [_row_to_event(r) for r in rows]

    async def partitions(self, owner: str, *, tier: int = 2) -> list[tuple[str, str, int]]:
        """(project, topic, live count) of every partition of the owner's live memories in ``tier``."""
        rows = await self._fetchall(
            "SELECT project, topic, COUNT(*) FROM memories WHERE owner = ? AND tier = ? AND is_archived = 0 "
            "GROUP BY project, topic ORDER BY project, topic",
            (owner, tier),
        )
        return [(r[0], r[1], int(r[2])) for r in rows]

    async def partition_memories(
        self, owner: str, project: str, topic: str, *, tier: int = 2
    ) -> list[Memory]:
        """Every live memory of one project/topic partition, most important first (seed 000 §7.3)."""
        rows = await self._fetchall(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE owner = ? AND tier = ? AND project = ? "
            "AND topic = ? AND is_archived = 0 ORDER BY importance DESC, id",
            (owner, tier, project, topic),
        )
        return [_row_to_memory(r) for r in rows]

    async def important_memories(
        self, owner: str, min_importance: float = 0.7, limit: int = 200, *, tier: int = 2
    ) -> list[Memory]:
        """Live memories of ``tier`` with importance >= ``min_importance``, most important first."""
        rows = await self._fetchall(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE owner = ? AND tier = ? AND is_archived = 0 "
            "AND importance >= ? ORDER BY importance DESC, id DESC LIMIT ?",
            (owner, tier, min_importance, limit),
        )
        return [_row_to_memory(r) for r in rows]

    async def memories_by_category(
        self, owner: str, categories: Iterable[str], *, tier: int = 2
    ) -> list[Memory]:
        """Every live memory of ``tier`` in one of ``categories`` (oldest first)."""
        cats = list(dict.fromkeys(categories))
        if not cats:
            return []
        marks = ",".join("?" * len(cats))
        rows = await self._fetchall(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE owner = ? AND tier = ? AND is_archived = 0 "
            f"AND category IN ({marks}) ORDER BY id",
            (owner, tier, *cats),
        )
        return [_row_to_memory(r) for r in rows]

    async def archive_many(self, owner: str, memory_ids: Iterable[int], now: datetime | None = None) -> int:
        """Soft-delete several of the owner's memories in one transaction; returns how many were live."""
        _check_owner(owner)
        ids = list(dict.fromkeys(int(i) for i in memory_ids))
        if not ids:
            return 0
        done = 0
        async with self.transaction() as db:
            for chunk in _chunks(ids):
                cur = await db.execute(
                    "UPDATE memories SET is_archived = 1, updated_at = ? WHERE owner = ? AND is_archived = 0 "
                    f"AND id IN ({','.join('?' * len(chunk))})",
                    (to_db(now or utcnow()), owner, *chunk),
                )
                done += int(cur.rowcount)
        if done:
            self._changed(owner)
        log.info("[memory] archive owner=%s count=%d", owner, done)
        return done

    async def replace_memories(
        self,
        owner: str,
        old_ids: Iterable[int],
        facts: Iterable[Fact],
        now: datetime | None = None,
    ) -> tuple[list[WriteResult], list[int]]:
        """Replace memories by new facts in one transaction; returns (one result per fact, archived ids).

        For the compaction jobs (weekly partition merge, Tier 1 refresh). A fact whose normalised content
        equals a live old row of its tier keeps that row (action ``kept``: same id, its references and
        access history intact; importance raised to the fact's if higher). Every other fact goes through
        the clean write path (it may merge into a row, old or not, or supersede one). Old rows no result
        points to are then archived; one with the same content as a result row points to it
        (``superseded_by``) and hands it its source references. All or nothing: an invalid fact raises
        ``ValueError`` before anything changes, and a failure rolls the whole replacement back. Facts
        must not be empty while old rows are given (that would only delete).
        """
        _check_owner(owner)
        new_facts = [_validated(f) for f in facts]
        old = list(dict.fromkeys(int(i) for i in old_ids))
        if old and not new_facts:
            raise ValueError("refusing to archive memories without any replacement fact")
        now = now or utcnow()
        vectors = await self._passage_vectors([f.content for f in new_facts])
        results: list[WriteResult] = []
        archived: list[int] = []
        async with self._write_lock:
            await self._db.execute("BEGIN IMMEDIATE")
            try:
                if vectors is not None:
                    await self._drop_vectors_if_others_wrote()
                live: dict[int, tuple[str, int]] = {}  # old id -> (norm_key, tier), live rows only
                for chunk in _chunks(old):
                    rows = await self._fetchall(
                        "SELECT id, norm_key, tier FROM memories WHERE owner = ? AND is_archived = 0 "
                        f"AND id IN ({','.join('?' * len(chunk))})",
                        (owner, *chunk),
                    )
                    live.update({int(i): (k, int(t)) for i, k, t in rows})
                live = {i: live[i] for i in old if i in live}  # in the caller's order
                by_key = {v: i for i, v in reversed(live.items())}  # the first old row of each key wins
                result_by_key: dict[tuple[str, int], int] = {}
                for index, fact in enumerate(new_facts):
                    key = (norm_key(fact.content), fact.tier)
                    same = by_key.get(key)
                    if same is not None:
                        await self._db.execute(
                            "UPDATE memories SET importance = MAX(importance, ?) WHERE id = ?",
                            (fact.importance, same),
                        )
                        result = WriteResult(same, "kept")
                    else:
                        vector = vectors[index] if vectors is not None else None
                        result = await self._write_one(owner, fact, now, vector)
                    results.append(result)
                    result_by_key.setdefault(key, result.id)
                keep = {r.id for r in results}
                stamp = to_db(now)
                for old_id, key in live.items():
                    if old_id in keep:
                        continue
                    target = result_by_key.get(key)
                    await self._db.execute(
                        "UPDATE memories SET is_archived = 1, updated_at = ?, "
                        "superseded_by = COALESCE(?, superseded_by) WHERE id = ? AND is_archived = 0",
                        (stamp, target, old_id),
                    )
                    if target is not None:
                        await self._db.execute(
                            "INSERT OR IGNORE INTO memory_refs(memory_id, ref) "
                            "SELECT ?, ref FROM memory_refs WHERE memory_id = ?",
                            (target, old_id),
                        )
                for chunk in _chunks(list(live)):
                    rows = await self._fetchall(
                        "SELECT id FROM memories WHERE is_archived = 1 "
                        f"AND id IN ({','.join('?' * len(chunk))}) ORDER BY id",
                        chunk,
                    )
                    archived.extend(int(r[0]) for r in rows)
                await self._db.execute("COMMIT")
            except BaseException:
                await self._db.execute("ROLLBACK")
                self._changed(owner)  # rows appended to the vector matrix were rolled back
                raise
        self._changed(owner)
        log.info(
            "[memory] replace owner=%s facts=%d kept=%d archived=%d",
            owner,
            len(results),
            sum(1 for r in results if r.action == "kept"),
            len(archived),
        )
        return results, archived


def _day(value: date | str) -> str:
    """A date as stored in ``daily_events.event_date`` (YYYY-MM-DD); raises ValueError when malformed."""
    day = value.isoformat() if isinstance(value, date) else value
    date.fromisoformat(day)
    return day


def _chunks(ids: Sequence[int], size: int = 500) -> list[Sequence[int]]:
    """``ids`` in slices small enough for one ``IN (...)`` list."""
    return [ids[i : i + size] for i in range(0, len(ids), size)]


def _window_bounds(window: TimeWindow) -> tuple[str, str]:
    """Stored-timestamp bounds [start 00:00, day after end 00:00) for a date window."""
    return f"{window.start.isoformat()} 00:00:00", f"{(window.end + timedelta(days=1)).isoformat()} 00:00:00"


def _in_window(created_at: str, window: TimeWindow) -> bool:
    start, end = _window_bounds(window)
    return start <= created_at < end


def _check_owner(owner: str) -> None:
    if not isinstance(owner, str) or not owner.strip():
        raise ValueError("owner must be a non-empty string")


def _validated(fact: Fact) -> Fact:
    """Reject facts the store must never hold, with a message that says what is wrong."""
    if not isinstance(fact.content, str):
        raise ValueError("memory content must be text")
    fact.content = fact.content.replace("\x00", "").strip()
    if not fact.content:
        raise ValueError("memory content must be non-empty text")
    if len(fact.content) > MAX_CONTENT_CHARS:
        raise ValueError(
            f"memory content is {len(fact.content)} characters, at most {MAX_CONTENT_CHARS}: "
            "a memory is a fact, not a document"
        )
    if fact.tier not in (1, 2):
        raise ValueError(f"tier must be 1 or 2, got {fact.tier!r}")
    if fact.category not in CATEGORIES:
        raise ValueError(f"category must be one of {', '.join(CATEGORIES)}; got {fact.category!r}")
    if not 0.0 <= float(fact.importance) <= 1.0:
        raise ValueError(f"importance must be within [0, 1], got {fact.importance!r}")
    fact.project = (fact.project or GLOBAL_PROJECT).strip() or GLOBAL_PROJECT
    return fact


def _selective_terms(weights: dict[str, float], indexed_rows: int) -> tuple[list[str], bool]:
    """Terms worth matching, and whether they are all very common.

    Terms no memory contains are dropped; very common terms are dropped when rarer ones exist. When only
    common terms remain, the three rarest are kept and the flag says so: bm25 barely separates rows
    then, and scoring thousands of them would cost milliseconds.
    """
    n = max(indexed_rows, 1)
    absent = math.log(1.0 + (n + 0.5) / 0.5)  # the weight of a term no memory contains
    present = {t: w for t, w in weights.items() if w < absent - 1e-9}
    if not present:
        return [], False
    cap = max(COMMON_TERM_FLOOR, COMMON_TERM_SHARE * n)
    # idf is monotone in df, so a df cap is an idf floor.
    idf_floor = math.log(1.0 + (n - cap + 0.5) / (cap + 0.5)) if cap < n else 0.0
    rare = [t for t, w in present.items() if w >= idf_floor]
    if rare:
        return rare, False
    return sorted(present, key=lambda t: -present[t])[:3], True


def _fuse_ranks(
    scored: Sequence[tuple[Sequence, float, float, float]], dense_rank: dict[int, int]
) -> dict[int, float]:
    """Weighted reciprocal-rank fusion of the keyword ranking (text score) and the cosine ranking.

    Ranks, not scores: bm25-derived text scores and cosines have unrelated, query-dependent scales, and
    on the dev sets rank fusion beat every tried mix of normalised scores (bench/README.md).
    """
    by_text = sorted((s for s in scored if s[1] > 0), key=lambda s: (-s[1], -s[0][0]))
    text_rank = {s[0][0]: rank for rank, s in enumerate(by_text, start=1)}
    fused: dict[int, float] = {}
    for row, _, _, _ in scored:
        memory_id = row[0]
        score = 0.0
        if memory_id in text_rank:
            score += 1.0 / (RRF_K + text_rank[memory_id])
        if memory_id in dense_rank:
            score += DENSE_WEIGHT / (RRF_K + dense_rank[memory_id])
        fused[memory_id] = score
    return fused


def _match_project(lowered: str, terms: tuple[str, ...], projects: frozenset[str]) -> str | None:
    """The known project the message names (as a term, or as a substring for multi-word names)."""
    term_set = set(terms)
    for name in sorted(projects, key=len, reverse=True):
        low = name.lower()
        if low in term_set or (len(low) >= 3 and low in lowered):
            return name
    return None

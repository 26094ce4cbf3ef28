"""The clean write path: every memory that is stored, changed or removed goes through here.

A fact is validated, then (in one transaction per batch) merged into an exact, near or semantic duplicate,
or it supersedes the memories with its subject+predicate, or it is inserted. Nothing is deleted except by
``purge``; everything else archives. docs/architecture.md, "Writes and deduplication", has the rules and
why each threshold is what it is. The SQL is in ``memory/store/memories.py``; the text comparisons in
``memory/text/dedup.py`` and ``memory/text/merge_guard.py``.

After any change the writer tells the caches what they must forget: the owner's known projects (the
retriever) and the owner's vector matrix (unless the change only appended rows to it).

One owner, one writer: every transaction here first makes itself the owner's only memory writer across
gateways (``_owner_transaction``: a per-owner advisory lock on PostgreSQL, the file's write lock on SQLite),
so the duplicate and supersede checks read what another gateway's write of that owner committed: an
extraction on one gateway and ``/remember`` on another cannot leave two live values of one single-valued
fact (docs/scale-out.md, "One writer per owner").
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from datetime import datetime

import numpy as np

from memory.clock import to_db, utcnow
from memory.records import GLOBAL_PROJECT, Fact, Memory, WriteResult
from memory.retrieval.decay import CATEGORIES
from memory.store import NewRow
from memory.store.protocol import MemoryStore
from memory.text import tokenizer
from memory.text.dedup import content_words, is_near_duplicate, norm_key
from memory.text.merge_guard import guard_allows_merge
from memory.vectors.cache import text_hash
from memory.vectors.index import vector_to_blob
from memory.vectors.owner_cache import OwnerVectorCache
from memory.vectors.usage import EmbeddingUse

log = logging.getLogger("tierclaw.memory")

# Near-duplicate candidates must contain this many of the new fact's rarest terms.
NEAR_DUP_TERMS = 2
# Longest memory accepted: a memory is a fact of about a sentence, not a document, and segmenting
# megabytes on every write would stall the writer.
MAX_CONTENT_CHARS = 20000
# Semantic dedup: 0.99 is the lowest cosine with no wrong guarded merge (bench/README.md, "Dedup threshold").
SEMANTIC_DUP_COSINE = 0.99


def check_owner(owner: str) -> None:
    """Refuse an empty or non-text owner: every row must belong to someone."""
    if not isinstance(owner, str) or not owner.strip():
        raise ValueError("owner must be a non-empty string")


def validated(fact: Fact) -> Fact:
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


class MemoryWriter:
    """Writes through the clean path; ``forget_owner`` is called whenever an owner's rows changed."""

    def __init__(
        self,
        store: MemoryStore,
        embedding: EmbeddingUse,
        vectors: OwnerVectorCache,
        forget_owner: Callable[[str], None],
    ) -> None:
        self._store = store
        self._embedding = embedding
        self._vectors = vectors
        self._forget_owner = forget_owner
        # Called when rows were stored without a vector (the gateway wakes its backfill with it).
        self.on_vectors_missing: Callable[[], None] | None = None

    @contextlib.asynccontextmanager
    async def _owner_transaction(self, owner: str) -> AsyncIterator[None]:
        """One transaction in which this process is ``owner``'s only memory writer (see the module doc)."""
        async with self._store.transaction():
            await self._store.memories.serialise_owner(owner)
            yield

    def changed(self, owner: str) -> None:
        """Forget what is cached about the owner's memories (known projects, vector matrix)."""
        self._forget_owner(owner)
        self._vectors.drop(owner)

    def vectors_missing(self) -> None:
        """Tell the backfill (if one is attached) that some live memories have no vector yet."""
        if self.on_vectors_missing is not None:
            self.on_vectors_missing()

    async def write_many(
        self,
        owner: str,
        facts: Iterable[Fact],
        now: datetime | None,
        *,
        embed: bool,
        first: Callable[[], Awaitable[None]] | None = None,
        then: Callable[[list[WriteResult]], Awaitable[None]] | None = None,
    ) -> list[WriteResult]:
        """Store several facts in one transaction, each through the clean path.

        With an embedder, the facts are embedded first (outside the transaction) so that each row gets
        its vector and a fact that means the same as a live memory merges into it (semantic dedup).
        ``embed=False`` is for writes someone waits on (``/remember``): the row is stored at once
        without a vector and the background backfill embeds it. An embedder failure never fails a
        write: the rows are stored without vectors and backfilled later. ``first`` runs inside the same
        transaction before the facts (an extracted batch claims its turns there) and ``then`` after them,
        with their results (the batch links its episode to the facts); if either raises, nothing is
        written.
        """
        check_owner(owner)
        checked = [validated(fact) for fact in facts]
        vectors = await self._embedding.passages([f.content for f in checked]) if embed else None
        results: list[WriteResult] = []
        try:
            async with self._owner_transaction(owner):
                if first is not None:
                    await first()
                if vectors is not None:
                    await self._vectors.drop_if_others_wrote()  # once, not per fact: we hold the lock now
                for index, fact in enumerate(checked):
                    vector = vectors[index] if vectors is not None else None
                    results.append(await self._write_one(owner, fact, now or utcnow(), vector))
                if then is not None:
                    await then(results)
        except BaseException:
            self.changed(owner)
            raise
        await self._store.search.fold_terms()  # PostgreSQL's term counts, now and then (off the locks)
        # Inserted rows were appended to a loaded vector matrix and merges change no vector, so the
        # matrix stays right; reloading it (~30 ms at 10k) would land on the next reply. A supersede
        # archives rows, so then it is dropped.
        self._forget_owner(owner)
        if any(r.action == "superseded" for r in results):
            self.changed(owner)
        if (
            self._embedding.embedder is not None
            and vectors is None
            and any(r.action != "merged" for r in results)
        ):
            self.vectors_missing()
        for r in results:
            log.info("[memory] write owner=%s id=%d action=%s", owner, r.id, r.action)
        return results

    async def _write_one(
        self, owner: str, fact: Fact, now: datetime, vector: np.ndarray | None
    ) -> WriteResult:
        memories = self._store.memories
        key = norm_key(fact.content)
        if fact.subject and fact.predicate:
            rows = await memories.same_subject(owner, fact.subject, fact.predicate)
            for old_id, old_key in rows:
                if old_key == key:
                    return await self._merge_into(old_id, fact, now)
            if rows:
                new_id = await self._insert(owner, fact, key, now, vector)
                await memories.supersede([old_id for old_id, _ in rows], new_id, to_db(now))
                return WriteResult(new_id, "superseded", rows[0][0])
        same = await memories.same_key(owner, key, fact.tier)
        if same is not None:
            return await self._merge_into(same, fact, now)
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
        embedder = self._embedding.embedder
        assert embedder is not None
        matrix = await self._vectors.get(owner, embedder.model_key, check_others=False)
        for cand_id, cosine in matrix.top(vector, 3, (fact.tier,)):
            if cosine < SEMANTIC_DUP_COSINE:
                break
            # Still live, and still holding this model's vector (an edit elsewhere clears it): a stale
            # cached vector can then never pull a new fact into a row that now says something else.
            content = await self._store.memories.live_embedded_content(
                owner, cand_id, fact.tier, embedder.model_key
            )
            if content is not None and guard_allows_merge(fact.content, content):
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
        search = self._store.search
        frequencies = await search.document_frequencies(tokenizer.query_terms(fact.content))
        # The fewer memories contain a term, the rarer it is (the same order as idf).
        rarest = sorted((t for t in frequencies if t in words), key=lambda t: frequencies[t])[:NEAR_DUP_TERMS]
        if not rarest:
            return None
        for cand_id, cand_content in await search.containing_all(owner, rarest, fact.tier):
            # The guard vetoes here too: "Paul14" and "Paul15" share every other word.
            if is_near_duplicate(words, content_words(cand_content)) and guard_allows_merge(
                fact.content, cand_content
            ):
                return int(cand_id)
        return None

    async def _insert(
        self, owner: str, fact: Fact, key: str, now: datetime, vector: np.ndarray | None
    ) -> int:
        embedder = self._embedding.embedder
        if embedder is None:  # a vector is kept only with the name of the model that made it
            vector = None
        row = NewRow(
            norm_key=key,
            search_text=tokenizer.index_text(fact.content),
            created_at=to_db(fact.created_at or now),
            vector=vector_to_blob(vector) if vector is not None else None,
            vector_model=embedder.model_key if embedder is not None and vector is not None else None,
        )
        new_id = await self._store.memories.insert(owner, fact, row)
        if vector is not None:
            # Later facts of the same transaction must see this row (a batch may repeat itself).
            self._vectors.append(owner, new_id, fact.tier, vector)
        return new_id

    async def _merge_into(self, memory_id: int, fact: Fact, now: datetime) -> WriteResult:
        await self._store.memories.merge_into(memory_id, fact.importance, to_db(now))
        if fact.source_ref:
            await self._store.memories.add_ref(memory_id, fact.source_ref)
        return WriteResult(memory_id, "merged")

    async def edit(
        self,
        owner: str,
        current: Memory,
        *,
        content: str | None,
        project: str | None,
        topic: str | None,
        category: str | None,
        importance: float | None,
        tier: int | None,
    ) -> None:
        """Rewrite fields of the live memory ``current``; the fields not given keep their values."""
        fact = validated(
            Fact(
                content=content if content is not None else current.content,
                project=project or current.project,
                topic=topic or current.topic,
                category=category or current.category,
                importance=importance if importance is not None else current.importance,
                tier=tier or current.tier,
            )
        )
        search_text = tokenizer.index_text(fact.content)
        await self._store.memories.update(
            owner,
            current.id,
            fact,
            norm_key=norm_key(fact.content),
            search_text=search_text,
            now=to_db(utcnow()),
        )
        self.changed(owner)
        if fact.content != current.content and self._embedding.embedder is not None:
            self.vectors_missing()  # the old vector described the old text: the backfill re-embeds it
        log.info("[memory] edit owner=%s id=%d", owner, current.id)

    async def archive(self, owner: str, memory_ids: Iterable[int], now: datetime | None = None) -> int:
        """Soft-delete the owner's live memories among ``memory_ids`` in one transaction; returns how many."""
        ids = list(dict.fromkeys(int(i) for i in memory_ids))
        if not ids:
            return 0
        async with self._owner_transaction(owner):
            done = await self._store.memories.archive(owner, ids, to_db(now or utcnow()))
        if done:
            self.changed(owner)
        return done

    async def restore(self, owner: str, memory_id: int, now: datetime | None = None) -> bool:
        """Undo an archive (a forget, a supersede, a merge): the row is live and searchable again."""
        async with self._owner_transaction(owner):
            done = await self._store.memories.restore(owner, memory_id, to_db(now or utcnow()))
        if done:
            self.changed(owner)  # its vector was kept while archived: the owner's matrix is rebuilt with it
        return done

    async def purge(self, owner: str, memory_id: int) -> bool:
        """Delete one memory for good, and the cached vector of its exact text."""
        async with self._owner_transaction(owner):
            content = await self._store.memories.purge(owner, memory_id)
            if content is not None:
                await self._store.vectors.uncache(text_hash(content))
        if content is None:
            return False
        self.changed(owner)
        log.info("[memory] purge owner=%s id=%d", owner, memory_id)
        return True

    async def replace(
        self, owner: str, old_ids: Iterable[int], facts: Iterable[Fact], now: datetime | None
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
        check_owner(owner)
        new_facts = [validated(f) for f in facts]
        old = list(dict.fromkeys(int(i) for i in old_ids))
        if old and not new_facts:
            raise ValueError("refusing to archive memories without any replacement fact")
        now = now or utcnow()
        vectors = await self._embedding.passages([f.content for f in new_facts])
        memories = self._store.memories
        results: list[WriteResult] = []
        try:
            async with self._owner_transaction(owner):
                if vectors is not None:
                    await self._vectors.drop_if_others_wrote()
                found = await memories.live_keys(owner, old)
                live = {i: found[i] for i in old if i in found}  # in the caller's order
                by_key = {v: i for i, v in reversed(live.items())}  # the first old row of each key wins
                result_by_key: dict[tuple[str, int], int] = {}
                for index, fact in enumerate(new_facts):
                    key = (norm_key(fact.content), fact.tier)
                    same = by_key.get(key)
                    if same is not None:
                        await memories.raise_importance(same, fact.importance)
                        result = WriteResult(same, "kept")
                    else:
                        vector = vectors[index] if vectors is not None else None
                        result = await self._write_one(owner, fact, now, vector)
                    results.append(result)
                    result_by_key.setdefault(key, result.id)
                await self._archive_replaced(live, {r.id for r in results}, result_by_key, now)
                archived = await memories.archived_among(list(live))
        except BaseException:
            self.changed(owner)  # rows appended to the vector matrix were rolled back
            raise
        self.changed(owner)
        log.info(
            "[memory] replace owner=%s facts=%d kept=%d archived=%d",
            owner,
            len(results),
            sum(1 for r in results if r.action == "kept"),
            len(archived),
        )
        return results, archived

    async def _archive_replaced(
        self,
        live: dict[int, tuple[str, int]],
        keep: set[int],
        result_by_key: dict[tuple[str, int], int],
        now: datetime,
    ) -> None:
        """Archive the old rows no result kept (inside ``replace``'s transaction); one with the content of
        a result row points to it and hands it its source references."""
        memories = self._store.memories
        for old_id, key in live.items():
            if old_id in keep:
                continue
            target = result_by_key.get(key)
            await memories.archive_into(old_id, target, to_db(now))
            if target is not None:
                await memories.copy_refs(target, [old_id])

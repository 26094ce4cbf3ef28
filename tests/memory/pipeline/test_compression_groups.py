"""The weekly merge by vector similarity: with an embedder the model sees only groups of similar entries of a
partition (memory/pipeline/compression.py, memory/vectors/clustering.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from memory.engine import MemoryEngine
from memory.model.offline_model import OfflineMemoryModel
from memory.model.protocol import MemoryModelError
from memory.pipeline.compression import (
    MERGE_CLUSTER_COSINE,
    MERGE_CLUSTER_DISTANCE_RATIO,
    MERGE_GROUP_MAX,
    merge_cluster_cosine,
    weekly_compress,
)
from memory.records import Fact, Memory
from memory.vectors.clustering import median_cosine
from memory.writes import SEMANTIC_DUP_COSINE
from tests.support.compression_model import (
    ALICE,
    NOW,
    ScriptedModel,
    _fill_partition,
    _live,
    _same,
)

# ------------------------------------------------------------------ weekly merge by vector similarity

GROUP_DIM = 128
# Restatements: similar enough to be merge candidates, not so similar that the write path merges them.
RESTATED_COSINE = (MERGE_CLUSTER_COSINE + SEMANTIC_DUP_COSINE) / 2
STAGING = [
    "The staging database listens on port 5433",
    "Staging Postgres uses port 5433 instead of the default",
    "Our staging DB instance answers on 5433",
]
RELEASES = ["Releases ship on Tuesday afternoons", "We deploy every Tuesday after lunch"]


class TableEmbedder:
    """An embedder with chosen unit vectors per text; any other text gets its own random direction."""

    model_key = f"test:table@{GROUP_DIM}"
    uses_local_cores = False

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self.table = table

    def vector(self, text: str) -> np.ndarray:
        if text in self.table:
            return self.table[text]
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        vector = np.random.default_rng(seed).standard_normal(GROUP_DIM)
        return (vector / np.linalg.norm(vector)).astype(np.float32)

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.vector(t) for t in texts])

    async def embed_query(self, text: str) -> np.ndarray:
        return self.vector(text)

    async def close(self) -> None:
        pass


def _restatements(groups: list[list[str]], cosine: float = RESTATED_COSINE) -> dict[str, np.ndarray]:
    """Vectors for groups of texts: within a group every pair has ``cosine``, across groups ~0."""
    basis = iter(np.linalg.qr(np.random.default_rng(11).standard_normal((GROUP_DIM, GROUP_DIM)))[0].T)
    table = {}
    for texts in groups:
        centre = next(basis)
        for text in texts:
            table[text] = (np.sqrt(cosine) * centre + np.sqrt(1 - cosine) * next(basis)).astype(np.float32)
    return table


class RecordingModel(ScriptedModel):
    """ScriptedModel that also records the ids handed to each merge call."""

    def __init__(self, **kwargs: Callable) -> None:
        super().__init__(**kwargs)
        self.merged_ids: list[list[int]] = []

    async def merge_partition(self, memories: list[Memory]) -> list[Fact]:
        self.merged_ids.append([m.id for m in memories])
        return await super().merge_partition(memories)


def _one_fact_per_group(mems: list[Memory]) -> list[Fact]:
    topic = "staging" if "5433" in mems[0].content else "releases"
    return [Fact(f"Merged note on {topic} from {len(mems)} entries", category="decision", importance=0.9)]


async def _grouped_partition(engine: MemoryEngine, *, embed_last: bool = True) -> dict[str, list[int]]:
    """tierclaw/db: the staging and release restatements among 12 unrelated decisions (refs chat:N)."""
    facts = [
        Fact(text, project="tierclaw", topic="db", category="decision", source_ref=f"chat:{n}")
        for n, text in enumerate([*STAGING, *RELEASES])
    ]
    written = [r.id for r in await engine.write_many(ALICE, facts[:-1])]
    written += [r.id for r in await engine.write_many(ALICE, facts[-1:], embed=embed_last)]
    unrelated = await _fill_partition(engine, 12)
    assert len(set(written)) == 5  # the write path kept the restatements apart
    return {"staging": written[:3], "releases": written[3:], "unrelated": unrelated}


async def test_with_vectors_the_model_sees_only_groups_of_similar_entries(engine: MemoryEngine) -> None:
    assert MERGE_CLUSTER_COSINE < RESTATED_COSINE < SEMANTIC_DUP_COSINE
    engine.embedder = TableEmbedder(_restatements([STAGING, RELEASES]))
    ids = await _grouped_partition(engine)
    unrelated_before = {m.id: m.content for m in await _live(engine) if m.id in ids["unrelated"]}
    model = RecordingModel(merge=_one_fact_per_group)

    report = await weekly_compress(engine, model, NOW)

    assert sorted(sorted(call) for call in model.merged_ids) == sorted([ids["staging"], ids["releases"]])
    assert report.failures == [] and report.groups_merged == 2 and report.partitions_merged == 1
    assert report.unembedded == 0 and report.archived == 5
    live = {m.id: m for m in await _live(engine)}
    assert {i: live[i].content for i in ids["unrelated"]} == unrelated_before  # untouched, same rows
    merged = {m.content: m for m in live.values() if m.id not in unrelated_before}
    assert sorted(merged) == [
        "Merged note on releases from 2 entries",
        "Merged note on staging from 3 entries",
    ]
    staging = merged["Merged note on staging from 3 entries"]
    releases = merged["Merged note on releases from 2 entries"]
    assert (staging.project, staging.topic, staging.tier, staging.source) == (
        "tierclaw",
        "db",
        2,
        "compression",
    )
    assert staging.refs == ["chat:0", "chat:1", "chat:2"]  # where the merged information came from
    assert releases.refs == ["chat:3", "chat:4"]
    for old in [*ids["staging"], *ids["releases"]]:
        row = await engine.get(ALICE, old)
        assert row is not None and row.is_archived


async def test_without_an_embedder_the_whole_partition_is_one_call(engine: MemoryEngine) -> None:
    ids = await _grouped_partition(engine)
    model = RecordingModel(merge=_same)

    report = await weekly_compress(engine, model, NOW)

    assert [sorted(call) for call in model.merged_ids] == [sorted(i for group in ids.values() for i in group)]
    assert report.partitions_merged == 1 and report.groups_merged == 0 and report.unembedded == 0


async def test_entries_without_a_vector_stay_out_of_groups(engine: MemoryEngine) -> None:
    engine.embedder = TableEmbedder(_restatements([STAGING, RELEASES]))
    ids = await _grouped_partition(engine, embed_last=False)  # the second release note awaits backfill
    model = RecordingModel(merge=_one_fact_per_group)

    report = await weekly_compress(engine, model, NOW)

    assert model.merged_ids == [ids["staging"]]  # the lone embedded release note has no partner
    assert report.groups_merged == 1 and report.unembedded == 1
    live = {m.id for m in await _live(engine)}
    assert set(ids["releases"]) <= live


async def test_a_failed_group_keeps_its_entries_and_the_other_group_merges(engine: MemoryEngine) -> None:
    engine.embedder = TableEmbedder(_restatements([STAGING, RELEASES]))
    ids = await _grouped_partition(engine)

    def merge(mems: list[Memory]) -> list[Fact]:
        if "5433" in mems[0].content:
            raise MemoryModelError("timeout")
        return _one_fact_per_group(mems)

    report = await weekly_compress(engine, RecordingModel(merge=merge), NOW)

    assert report.groups_merged == 1 and report.partitions_merged == 1
    assert report.failures == [
        "alice: merge of tierclaw/db (3 similar entries) failed (MemoryModelError: timeout)"
    ]
    live = {m.id for m in await _live(engine)}
    assert set(ids["staging"]) <= live and not set(ids["releases"]) & live


async def test_offline_model_folds_an_exact_duplicate_group_and_keeps_its_refs(engine: MemoryEngine) -> None:
    engine.embedder = TableEmbedder(_restatements([STAGING, RELEASES]))
    ids = await _grouped_partition(engine)
    # A hand edit turns a release note into an exact duplicate of the other; it keeps its vector here.
    table = engine.embedder.table
    table["we deploy every TUESDAY after lunch."] = table[RELEASES[1]]
    await engine.edit(ALICE, ids["releases"][0], content="we deploy every TUESDAY after lunch.")
    await engine.vectors.set_embeddings(
        TableEmbedder.model_key,
        [(ids["releases"][0], "we deploy every TUESDAY after lunch.", table[RELEASES[0]])],
    )

    report = await weekly_compress(engine, OfflineMemoryModel(), NOW)

    assert report.failures == [] and report.groups_merged == 2 and report.archived == 1
    rows = [await engine.get(ALICE, i) for i in ids["releases"]]
    kept = [r for r in rows if r is not None and not r.is_archived]
    assert len(kept) == 1 and kept[0].refs == ["chat:3", "chat:4"]  # the duplicate's origin moved over
    live = {m.id for m in await _live(engine)}
    assert set(ids["staging"]) | set(ids["unrelated"]) <= live  # distinct contents: nothing folded


async def test_a_big_group_is_merged_in_calls_of_at_most_the_cap(engine: MemoryEngine) -> None:
    texts = [f"Cache rule {i}: shard s{i} keeps bucket b{i}" for i in range(MERGE_GROUP_MAX + 10)]
    assert len(texts) + 1 <= GROUP_DIM
    engine.embedder = TableEmbedder(_restatements([texts]))
    facts = [Fact(t, project="infra", topic="cache", category="decision") for t in texts]
    await engine.write_many(ALICE, facts)
    await _fill_partition(engine, 60, project="infra", topic="cache")  # the partition's background
    model = RecordingModel(merge=_same)

    report = await weekly_compress(engine, model, NOW)

    assert sorted(len(call) for call in model.merged_ids) == [30, 30]
    assert report.groups_merged == 2 and report.archived == 0  # the model changed nothing


def test_cluster_cut_follows_the_partitions_own_scale() -> None:
    rng = np.random.default_rng(12)
    spread = rng.standard_normal((200, GROUP_DIM))
    spread /= np.linalg.norm(spread, axis=1, keepdims=True)
    assert merge_cluster_cosine(spread) == MERGE_CLUSTER_COSINE  # unrelated rows: the floor
    common = spread[0]
    dense = 0.95 * common + 0.32 * spread[1:]  # every pair ~0.9, as Chinese e5 memories are
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)
    cut = merge_cluster_cosine(dense)
    assert cut == pytest.approx(1 - MERGE_CLUSTER_DISTANCE_RATIO * (1 - median_cosine(dense)))
    assert 0.95 < cut < 0.99

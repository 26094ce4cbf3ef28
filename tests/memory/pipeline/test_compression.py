"""Daily and weekly compression on a real engine, with the offline model and a scripted MemoryModel."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta

import numpy as np
import pytest

from memory.engine import MemoryEngine
from memory.model.offline_model import OfflineMemoryModel
from memory.model.protocol import Extraction, MemoryModel, MemoryModelError, Turn
from memory.pipeline.compression import (
    MERGE_CLUSTER_COSINE,
    MERGE_CLUSTER_DISTANCE_RATIO,
    MERGE_GROUP_MAX,
    MERGE_MIN_ENTRIES,
    daily_compress,
    merge_cluster_cosine,
    weekly_compress,
)
from memory.records import Event, Fact, Memory
from memory.vectors.clustering import median_cosine
from memory.writes import SEMANTIC_DUP_COSINE

ALICE, BOB = "alice", "bob"
DAY = date(2026, 3, 10)
NOW = datetime(2026, 3, 16, 4, 0, tzinfo=UTC)


class ScriptedModel:
    """A test double of our MemoryModel protocol: canned answers, optional failures, a call log."""

    def __init__(
        self,
        *,
        compress: Callable[[list[Event]], list[Fact]] | None = None,
        merge: Callable[[list[Memory]], list[Fact]] | None = None,
        profile: Callable[[list[Memory], list[Memory]], list[Fact]] | None = None,
        fail_owners: frozenset[str] = frozenset(),
    ) -> None:
        self._compress = compress or (lambda events: [])
        self._merge = merge or (lambda mems: [])
        self._profile = profile or (lambda prof, imp: [])
        self.fail_owners = fail_owners
        self.calls: list[tuple[str, object]] = []

    @property
    def label(self) -> str:
        return "scripted"

    def _maybe_fail(self, owners: set[str]) -> None:
        if owners & self.fail_owners:
            raise MemoryModelError("scripted failure")

    async def extract(self, turns: list[Turn]) -> Extraction:
        return Extraction()

    async def compress_events(self, events: list[Event]) -> list[Fact]:
        self.calls.append(("compress", [e.id for e in events]))
        self._maybe_fail({e.owner for e in events})
        return self._compress(events)

    async def merge_partition(self, memories: list[Memory]) -> list[Fact]:
        self.calls.append(("merge", (memories[0].project, memories[0].topic, len(memories))))
        self._maybe_fail({m.owner for m in memories})
        return self._merge(memories)

    async def refresh_profile(self, profile: list[Memory], important: list[Memory]) -> list[Fact]:
        self.calls.append(("profile", (len(profile), len(important))))
        self._maybe_fail({m.owner for m in [*profile, *important]})
        return self._profile(profile, important)


def _same(mems: list[Memory]) -> list[Fact]:
    """A merge that returns every entry unchanged."""
    return [Fact(m.content, category=m.category, importance=m.importance) for m in mems]


async def _live(engine: MemoryEngine, owner: str = ALICE, tier: int | None = 2) -> list[Memory]:
    return await engine.list(owner, tier=tier, limit=10_000)


async def _live_contents(engine: MemoryEngine, owner: str = ALICE, tier: int | None = 2) -> list[str]:
    return sorted(m.content for m in await _live(engine, owner, tier))


async def _fill_partition(
    engine: MemoryEngine, n: int, project: str = "tierclaw", topic: str = "db"
) -> list[int]:
    facts = [
        Fact(
            f"Decision {i}: table {topic}{i} gets column c{i}",
            project=project,
            topic=topic,
            category="decision",
        )
        for i in range(n)
    ]
    return [r.id for r in await engine.write_many(ALICE, facts)]


def test_scripted_model_satisfies_the_protocol() -> None:
    model: MemoryModel = ScriptedModel()
    assert model.label == "scripted"


# ------------------------------------------------------------------------------------------- daily


async def test_daily_compresses_events_into_facts_and_marks_them(engine: MemoryEngine) -> None:
    a1 = await engine.events.add(ALICE, "I live in Berlin.", event_date=DAY)
    a2 = await engine.events.add(ALICE, "We talked about the weather. I like green tea.", event_date=DAY)
    b1 = await engine.events.add(BOB, "我叫小明", event_date=DAY)
    later = await engine.events.add(ALICE, "I use Neovim.", event_date=DAY + timedelta(days=1))

    report = await daily_compress(engine, OfflineMemoryModel(), DAY)

    assert (report.owners, report.events_compressed, report.facts_written, report.failures) == (2, 3, 3, [])
    alice = await _live(engine)
    assert sorted(m.content for m in alice) == ["I like green tea.", "I live in Berlin."]
    assert all(m.source == "compression" and m.source_ref == f"events:{a1}-{a2}" for m in alice)
    assert all(m.created_at == "2026-03-10 12:00:00" for m in alice)
    assert await _live_contents(engine, BOB) == ["我叫小明"]
    pending = await engine.events.find(ALICE, include_compressed=False)
    assert [e.id for e in pending] == [later]  # the next day is not compressed yet
    assert not await engine.events.find(BOB, include_compressed=False)
    assert b1 not in [e.id for e in pending]


async def test_daily_compresses_older_missed_days_too(engine: MemoryEngine) -> None:
    old = await engine.events.add(ALICE, "I live in Berlin.", event_date=DAY - timedelta(days=3))
    new = await engine.events.add(ALICE, "I like green tea.", event_date=DAY)
    model = ScriptedModel(compress=lambda events: [Fact(e.summary) for e in events])

    report = await daily_compress(engine, model, DAY)

    assert report.events_compressed == 2
    assert model.calls == [("compress", [old]), ("compress", [new])]  # one call per day, oldest first
    created = {m.content: m.created_at for m in await _live(engine)}
    assert created == {"I live in Berlin.": "2026-03-07 12:00:00", "I like green tea.": "2026-03-10 12:00:00"}
    assert not await engine.events.find(ALICE, include_compressed=False)


async def test_model_failure_keeps_that_owners_events_and_the_next_run_compresses_them(
    engine: MemoryEngine,
) -> None:
    await engine.events.add(ALICE, "I live in Berlin.", event_date=DAY)
    await engine.events.add(BOB, "I live in Rome.", event_date=DAY)
    failing = ScriptedModel(compress=lambda events: [Fact(e.summary) for e in events], fail_owners={ALICE})

    report = await daily_compress(engine, failing, DAY)

    assert report.owners == 2 and report.events_compressed == 1
    assert len(report.failures) == 1 and report.failures[0].startswith("alice: daily compression")
    assert "MemoryModelError" in report.failures[0]
    assert await _live_contents(engine, ALICE) == []
    assert len(await engine.events.find(ALICE, include_compressed=False)) == 1
    assert await _live_contents(engine, BOB) == ["I live in Rome."]

    retry = await daily_compress(engine, OfflineMemoryModel(), DAY + timedelta(days=1))

    assert (retry.owners, retry.events_compressed, retry.failures) == (1, 1, [])
    assert await _live_contents(engine, ALICE) == ["I live in Berlin."]
    assert not await engine.events.find(ALICE, include_compressed=False)


async def test_a_failed_day_stops_that_owner_so_later_days_wait(engine: MemoryEngine) -> None:
    first = await engine.events.add(ALICE, "I live in Berlin.", event_date=DAY - timedelta(days=1))
    await engine.events.add(ALICE, "I like tea.", event_date=DAY)

    def bad_first_day(events: list[Event]) -> list[Fact]:
        if events[0].id == first:
            raise MemoryModelError("invalid JSON")
        return []

    model = ScriptedModel(compress=bad_first_day)
    report = await daily_compress(engine, model, DAY)
    assert report.events_compressed == 0 and len(report.failures) == 1
    assert [c[0] for c in model.calls] == ["compress"]
    assert len(await engine.events.find(ALICE, include_compressed=False)) == 2


async def test_invalid_facts_from_the_model_write_nothing_and_keep_the_events(engine: MemoryEngine) -> None:
    await engine.events.add(ALICE, "I live in Berlin.", event_date=DAY)
    model = ScriptedModel(compress=lambda events: [Fact("fine fact"), Fact("bad fact", category="bogus")])

    report = await daily_compress(engine, model, DAY)

    assert report.events_compressed == 0 and "ValueError" in report.failures[0]
    assert await _live_contents(engine) == []
    assert len(await engine.events.find(ALICE, include_compressed=False)) == 1


async def test_no_facts_still_marks_the_events_compressed(engine: MemoryEngine) -> None:
    await engine.events.add(ALICE, "The user asked about the weather.", event_date=DAY)
    report = await daily_compress(engine, OfflineMemoryModel(), DAY)
    assert (report.events_compressed, report.facts_written) == (1, 0)
    assert not await engine.events.find(ALICE, include_compressed=False)
    again = await daily_compress(engine, OfflineMemoryModel(), DAY)
    assert again.owners == 0  # nothing left to do


async def test_daily_logs_one_line_per_owner_without_content(
    engine: MemoryEngine, caplog: pytest.LogCaptureFixture
) -> None:
    await engine.events.add(ALICE, "I live in Berlin.", event_date=DAY)
    await engine.events.add(BOB, "I live in Rome.", event_date=DAY)
    with caplog.at_level(logging.INFO, logger="tierclaw.memory"):
        await daily_compress(engine, ScriptedModel(fail_owners={BOB}), DAY)
    lines = [r.getMessage() for r in caplog.records if "daily compression" in r.getMessage()]
    assert len(lines) == 2 and all(line.startswith("[memory] ") for line in lines)
    assert any("owner=alice" in line for line in lines) and any("owner=bob" in line for line in lines)
    info_and_up = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert not any("Berlin" in m or "Rome" in m for m in info_and_up)


# ------------------------------------------------------------------------------------ weekly merge


async def test_partition_below_the_threshold_is_untouched_and_one_at_it_is_merged(
    engine: MemoryEngine,
) -> None:
    small = await _fill_partition(engine, MERGE_MIN_ENTRIES - 1, topic="small")
    big = await _fill_partition(engine, MERGE_MIN_ENTRIES, topic="big")
    model = ScriptedModel(merge=_same)

    report = await weekly_compress(engine, model, NOW)

    merges = [args for name, args in model.calls if name == "merge"]
    assert merges == [("tierclaw", "big", MERGE_MIN_ENTRIES)]
    assert report.partitions_merged == 1 and report.failures == []
    live_ids = {m.id for m in await _live(engine)}
    assert set(small) <= live_ids and set(big) <= live_ids  # unchanged content keeps its rows


async def test_merge_combines_entries_and_loses_nothing(engine: MemoryEngine) -> None:
    ids = await _fill_partition(engine, 12)
    before = {m.id: m.content for m in await _live(engine)}
    combined = "Decisions 0 and 1: tables db0 and db1 get columns c0 and c1"

    def merge(mems: list[Memory]) -> list[Fact]:
        keep = [m for m in mems if m.id not in ids[:2]]
        # the model restates one entry with different punctuation and case: still the same memory
        restated = [
            Fact(m.content.upper() + "!" if m.id == ids[5] else m.content, category=m.category) for m in keep
        ]
        return [Fact(combined, category="decision", importance=0.9, project="elsewhere"), *restated]

    report = await weekly_compress(engine, ScriptedModel(merge=merge), NOW)

    assert report.partitions_merged == 1 and report.failures == []
    live = await _live(engine)
    contents = [m.content for m in live]
    assert sorted(contents) == sorted([combined, *(before[i] for i in ids[2:])])
    assert len(contents) == len(set(contents))  # each piece of content live exactly once
    assert {m.id for m in live} - {ids[i] for i in range(2, 12)} != set()  # the combined one is new
    assert {ids[i] for i in range(2, 12)} <= {m.id for m in live}  # restated entries kept their rows
    new = next(m for m in live if m.content == combined)
    assert (new.project, new.topic, new.tier, new.source) == ("tierclaw", "db", 2, "compression")
    for old_id in ids[:2]:
        old = await engine.get(ALICE, old_id)
        assert old is not None and old.is_archived
    assert report.archived == 2


async def test_offline_merge_folds_duplicates_and_keeps_every_content_once(engine: MemoryEngine) -> None:
    ids = await _fill_partition(engine, 10)
    # Two rows that became exact duplicates of others (e.g. through edits); the write path would have
    # merged them, so they are made the way a hand edit makes them.
    dup_a = (
        await engine.write(ALICE, Fact("placeholder a", project="tierclaw", topic="db", source_ref="r:a"))
    ).id
    dup_b = (await engine.write(ALICE, Fact("placeholder b", project="tierclaw", topic="db"))).id
    await engine.edit(ALICE, dup_a, content="decision 3: TABLE db3 gets column c3.")
    await engine.edit(ALICE, dup_b, content="Decision 7: table db7 gets column c7")
    distinct_before = {m.content.lower().rstrip(".") for m in await _live(engine)}

    report = await weekly_compress(engine, OfflineMemoryModel(), NOW)

    assert report.partitions_merged == 1 and report.failures == []
    live = await _live(engine)
    assert {m.id for m in live} == set(ids)  # originals kept with their ids, duplicates gone
    assert {m.content.lower().rstrip(".") for m in live} == distinct_before
    for dup, original in ((dup_a, ids[3]), (dup_b, ids[7])):
        row = await engine.get(ALICE, dup)
        assert row is not None and row.is_archived and row.superseded_by == original
    kept = await engine.get(ALICE, ids[3])
    assert kept is not None and "r:a" in kept.refs  # the duplicate's origin moved to the kept row


async def test_merge_equal_to_old_entries_does_not_archive_them(engine: MemoryEngine) -> None:
    """The trap: a merged fact equal to an old entry must not be merged into it and then archived."""
    ids = await _fill_partition(engine, 10)
    report = await weekly_compress(engine, ScriptedModel(merge=_same), NOW)
    assert report.archived == 0 and report.failures == []
    assert sorted(m.id for m in await _live(engine)) == sorted(ids)
    # and the clean write path did not bump them as if they had been used
    assert all(m.access_count == 0 for m in await _live(engine))


@pytest.mark.parametrize(
    "merge",
    [
        lambda mems: [],  # nothing back for a non-empty partition
        lambda mems: [Fact("a brand new merged fact"), Fact("bad one", category="bogus")],  # invalid output
        lambda mems: (_ for _ in ()).throw(MemoryModelError("timeout")),  # the call failed
    ],
    ids=["empty", "invalid", "error"],
)
async def test_failed_merge_keeps_the_partition_as_it_was(engine: MemoryEngine, merge: Callable) -> None:
    ids = await _fill_partition(engine, 10)
    before = sorted((m.id, m.content, m.is_archived) for m in await _live(engine))

    report = await weekly_compress(engine, ScriptedModel(merge=merge), NOW)

    assert report.partitions_merged == 0
    assert len(report.failures) == 1 and report.failures[0].startswith("alice: merge of tierclaw/db")
    assert sorted((m.id, m.content, m.is_archived) for m in await _live(engine)) == before
    assert sorted(ids) == [m.id for m in sorted(await _live(engine), key=lambda m: m.id)]


async def test_merge_failure_of_one_owner_does_not_stop_another(engine: MemoryEngine) -> None:
    await _fill_partition(engine, 10)
    await engine.write_many(BOB, [Fact(f"Bob fact number {i} about item{i}") for i in range(10)])

    def merge(mems: list[Memory]) -> list[Fact]:
        return [Fact("Bob's ten facts, merged", category="event")]

    report = await weekly_compress(engine, ScriptedModel(merge=merge, fail_owners={ALICE}), NOW)

    assert report.owners == 2 and report.partitions_merged == 1
    assert [f.split(":")[0] for f in report.failures] == ["alice"]
    assert len(await _live(engine)) == 10
    assert await _live_contents(engine, BOB) == ["Bob's ten facts, merged"]


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


# ---------------------------------------------------------------------------------- profile refresh


async def test_profile_is_replaced_only_when_the_model_returns_entries(engine: MemoryEngine) -> None:
    old = await engine.write(ALICE, Fact("Works at ACME", tier=1, category="identity", importance=1.0))
    await engine.write(
        ALICE, Fact("Name is Alice", category="identity", importance=1.0, subject="user", predicate="name")
    )

    empty = await weekly_compress(engine, ScriptedModel(), NOW)
    assert empty.profile_entries == 0 and empty.failures == []
    assert [m.id for m in await engine.profile(ALICE)] == [old.id]

    failing = await weekly_compress(engine, ScriptedModel(fail_owners={ALICE}), NOW)
    assert [f.split(":")[0] for f in failing.failures] == ["alice"]
    assert [m.id for m in await engine.profile(ALICE)] == [old.id]

    def refresh(profile: list[Memory], important: list[Memory]) -> list[Fact]:
        assert [m.content for m in profile] == ["Works at ACME"]
        assert [m.content for m in important] == ["Name is Alice"]
        return [
            Fact(
                "Alice, engineer at Initech",
                category="identity",
                importance=1.0,
                subject="user",
                predicate="name",
            )
        ]

    replaced = await weekly_compress(engine, ScriptedModel(profile=refresh), NOW)

    assert replaced.profile_entries == 1 and replaced.failures == []
    assert [m.content for m in await engine.profile(ALICE)] == ["Alice, engineer at Initech"]
    gone = await engine.get(ALICE, old.id)
    assert gone is not None and gone.is_archived
    assert await _live_contents(engine) == ["Name is Alice"]  # Tier 2 untouched


async def test_offline_profile_refresh_lifts_identity_without_touching_tier2(engine: MemoryEngine) -> None:
    manual = await engine.write(
        ALICE, Fact("Answer briefly", tier=1, category="config", importance=0.9, source="manual")
    )
    berlin = await engine.write(
        ALICE,
        Fact("I live in Berlin", category="identity", importance=1.0, subject="user", predicate="lives_in"),
    )
    await engine.write(ALICE, Fact("I use Neovim", category="config", importance=0.8))
    await engine.write(ALICE, Fact("We picked SQLite", category="decision", importance=0.8))

    report = await weekly_compress(engine, OfflineMemoryModel(), NOW)

    assert report.failures == [] and report.profile_entries == 3
    profile = await engine.profile(ALICE)
    assert sorted(m.content for m in profile) == ["Answer briefly", "I live in Berlin", "I use Neovim"]
    assert manual.id in {m.id for m in profile}
    tier2 = await engine.get(ALICE, berlin.id)
    assert tier2 is not None and not tier2.is_archived and tier2.access_count == 0

    # Tier 2 moves on: the next refresh drops the stale copy, keeps the user's own entry.
    await engine.write(
        ALICE,
        Fact("I moved to Paris", category="identity", importance=1.0, subject="user", predicate="lives_in"),
    )
    await weekly_compress(engine, OfflineMemoryModel(), NOW + timedelta(days=7))
    assert sorted(m.content for m in await engine.profile(ALICE)) == [
        "Answer briefly",
        "I moved to Paris",
        "I use Neovim",
    ]


# -------------------------------------------------------------------------------------------- decay


async def test_decayed_temp_memory_is_archived_identity_never(engine: MemoryEngine) -> None:
    long_ago = NOW - timedelta(days=60)
    stale = await engine.write(
        ALICE, Fact("Tired today", category="temp", importance=0.2, created_at=long_ago)
    )
    stale_debug = await engine.write(
        ALICE, Fact("Port 8080 was busy", category="debug", importance=1.0, created_at=long_ago)
    )
    fresh = await engine.write(
        ALICE, Fact("In a meeting now", category="temp", importance=0.2, created_at=NOW - timedelta(days=2))
    )
    identity = await engine.write(
        ALICE,
        Fact("My name is Alice", category="identity", importance=1.0, created_at=NOW - timedelta(days=900)),
    )
    event = await engine.write(
        ALICE, Fact("Went to Rome", category="event", importance=0.5, created_at=long_ago)
    )

    report = await weekly_compress(engine, OfflineMemoryModel(), NOW)

    assert report.archived == 2
    live = {m.id for m in await _live(engine)}
    assert stale.id not in live and stale_debug.id not in live
    assert {fresh.id, identity.id, event.id} <= live


async def test_weekly_logs_one_line_per_owner(engine: MemoryEngine, caplog: pytest.LogCaptureFixture) -> None:
    await engine.write(ALICE, Fact("I live in Berlin", category="identity", importance=1.0))
    await engine.events.add(BOB, "something happened", event_date=DAY)
    with caplog.at_level(logging.INFO, logger="tierclaw.memory"):
        report = await weekly_compress(engine, OfflineMemoryModel(), NOW)
    assert report.owners == 2
    lines = [r.getMessage() for r in caplog.records if "weekly compression" in r.getMessage()]
    assert sorted(line.split()[3] for line in lines) == ["owner=alice", "owner=bob"]
    assert not any("Berlin" in r.getMessage() for r in caplog.records if r.levelno >= logging.INFO)


# ---------------------------------------------------------------------------- engine helpers added


async def test_replace_memories_refuses_to_only_delete_and_is_all_or_nothing(engine: MemoryEngine) -> None:
    ids = await _fill_partition(engine, 3)
    with pytest.raises(ValueError, match="without any replacement"):
        await engine.replace_memories(ALICE, ids, [])
    with pytest.raises(ValueError, match="category"):
        await engine.replace_memories(ALICE, ids, [Fact("new"), Fact("bad", category="bogus")])
    assert sorted(m.id for m in await _live(engine)) == sorted(ids)
    assert await _live_contents(engine, ALICE) == sorted(m.content for m in await _live(engine))


async def test_replace_memories_never_touches_another_owner(engine: MemoryEngine) -> None:
    bob = await engine.write(BOB, Fact("Bob's fact"))
    results, archived = await engine.replace_memories(ALICE, [bob.id], [Fact("Alice's fact")])
    assert archived == [] and [r.action for r in results] == ["inserted"]
    row = await engine.get(BOB, bob.id)
    assert row is not None and not row.is_archived


async def test_engine_listing_helpers(engine: MemoryEngine) -> None:
    await _fill_partition(engine, 3, topic="a")
    await engine.write(ALICE, Fact("Old note", category="temp"))
    assert await engine.compression.partitions(ALICE) == [("_global", "_general", 1), ("tierclaw", "a", 3)]
    assert [m.content for m in await engine.compression.memories_by_category(ALICE, ["temp", "debug"])] == [
        "Old note"
    ]
    await engine.events.add(ALICE, "x happened", event_date=DAY)
    await engine.events.add(BOB, "y happened", event_date=DAY + timedelta(days=1))
    assert await engine.compression.owners_with_uncompressed_events(DAY) == [ALICE]
    assert await engine.compression.owners_with_uncompressed_events(DAY + timedelta(days=1)) == [ALICE, BOB]
    temp = (await engine.compression.memories_by_category(ALICE, ["temp"]))[0]
    assert await engine.archive_many(ALICE, [temp.id, temp.id]) == 1
    assert await engine.archive_many(BOB, [m.id for m in await _live(engine)]) == 0

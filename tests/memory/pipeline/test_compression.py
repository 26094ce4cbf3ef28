"""Daily and weekly compression on a real engine, with the offline model and a scripted MemoryModel: the daily
fold, the weekly merge of a partition, the profile refresh, decay, and the engine's helpers for them.
Merging by vector similarity is in test_compression_groups.py.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

import pytest

from memory.engine import MemoryEngine
from memory.model.offline_model import OfflineMemoryModel
from memory.model.protocol import MemoryModel, MemoryModelError
from memory.pipeline.compression import (
    MERGE_MIN_ENTRIES,
    daily_compress,
    weekly_compress,
)
from memory.records import Event, Fact, Memory
from tests.support.compression_model import (
    ALICE,
    BOB,
    DAY,
    NOW,
    ScriptedModel,
    _fill_partition,
    _live,
    _live_contents,
    _same,
)


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
    # The clean clause (issue 35: no closing full stop); the conversation about the weather is no fact.
    assert sorted(m.content for m in alice) == ["I like green tea", "I live in Berlin"]
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
    assert await _live_contents(engine, ALICE) == ["I live in Berlin"]  # the clean clause
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

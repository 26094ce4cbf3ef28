"""The clean write path: merge exact/normalised/near duplicates, supersede, soft archive, purge, checks."""

from __future__ import annotations

import pytest

from memory.engine import MemoryEngine
from memory.records import Fact
from tests.support.sqlite_peek import sql as _sql

OWNER = "alice"


async def _live_contents(engine: MemoryEngine, owner: str = OWNER) -> list[str]:
    return sorted(m.content for m in await engine.list(owner))


async def test_insert_then_get_round_trip(engine: MemoryEngine) -> None:
    result = await engine.write(
        OWNER,
        Fact(
            "User works on myclaw",
            project="myclaw",
            topic="work",
            category="decision",
            importance=0.7,
            source="manual",
            source_ref="tg:1:2",
        ),
    )
    assert result.action == "inserted" and result.replaced_id is None
    mem = await engine.get(OWNER, result.id)
    assert mem is not None
    assert (mem.owner, mem.tier, mem.project, mem.topic, mem.category) == (
        OWNER,
        2,
        "myclaw",
        "work",
        "decision",
    )
    assert (mem.content, mem.importance, mem.source, mem.source_ref) == (
        "User works on myclaw",
        0.7,
        "manual",
        "tg:1:2",
    )
    assert mem.access_count == 0 and not mem.is_archived and mem.superseded_by is None
    assert mem.refs == ["tg:1:2"]


async def test_exact_duplicate_merges(engine: MemoryEngine) -> None:
    first = await engine.write(OWNER, Fact("User likes coffee.", importance=0.4, source_ref="r1"))
    second = await engine.write(OWNER, Fact("User likes coffee.", importance=0.9, source_ref="r2"))
    assert second.action == "merged"
    assert second.id == first.id
    mem = await engine.get(OWNER, first.id)
    assert mem is not None
    assert mem.access_count == 1
    assert mem.importance == pytest.approx(0.9)
    assert mem.refs == ["r1", "r2"]
    assert await _live_contents(engine) == ["User likes coffee."]
    assert _sql(engine, "SELECT COUNT(*) FROM memories")[0][0] == 1


async def test_merge_keeps_the_higher_importance_and_counts_each_merge(engine: MemoryEngine) -> None:
    first = await engine.write(OWNER, Fact("User likes coffee.", importance=0.8, source_ref="r1"))
    await engine.write(OWNER, Fact("User likes coffee.", importance=0.2, source_ref="r2"))
    await engine.write(OWNER, Fact("User likes coffee.", importance=0.5, source_ref="r1"))
    mem = await engine.get(OWNER, first.id)
    assert mem is not None
    assert mem.importance == pytest.approx(0.8)
    assert mem.access_count == 2
    assert mem.refs == ["r1", "r2"]  # refs are a set: the repeated r1 is stored once


@pytest.mark.parametrize(
    ("original", "variant"),
    [
        ("User likes coffee.", "user likes COFFEE"),
        ("User likes coffee.", "ＵＳＥＲ　ｌｉｋｅｓ　ｃｏｆｆｅｅ！"),
        ("User likes coffee.", "  User   likes coffee!!  "),
        ("我喜欢喝咖啡。", "我喜欢喝咖啡"),
        ("我喜欢喝咖啡。", "我喜欢喝咖啡！"),
        ("我喜欢喝咖啡。", "我 喜欢 喝 咖啡"),
    ],
)
async def test_normalised_duplicate_merges(engine: MemoryEngine, original: str, variant: str) -> None:
    first = await engine.write(OWNER, Fact(original, importance=0.3, source_ref="a"))
    second = await engine.write(OWNER, Fact(variant, importance=0.6, source_ref="b"))
    assert (second.action, second.id) == ("merged", first.id)
    mem = await engine.get(OWNER, first.id)
    assert mem is not None
    assert mem.content == original  # the existing row is kept, not rewritten
    assert mem.access_count == 1
    assert mem.importance == pytest.approx(0.6)
    assert mem.refs == ["a", "b"]
    assert len(await engine.list(OWNER)) == 1


@pytest.mark.parametrize(
    ("original", "variant"),
    [
        ("User likes coffee.", "The user likes coffee"),
        ("The user likes coffee", "User likes coffee."),
        ("User prefers dark mode in every editor", "The user prefers dark mode in every editor."),
    ],
)
async def test_near_duplicate_merges(engine: MemoryEngine, original: str, variant: str) -> None:
    first = await engine.write(OWNER, Fact(original, source_ref="a"))
    second = await engine.write(OWNER, Fact(variant, source_ref="b"))
    assert (second.action, second.id) == ("merged", first.id)
    mem = await engine.get(OWNER, first.id)
    assert mem is not None and mem.refs == ["a", "b"] and mem.access_count == 1
    assert await _live_contents(engine) == [original]


async def test_near_duplicates_in_one_batch_merge(engine: MemoryEngine) -> None:
    results = await engine.write_many(OWNER, [Fact("The user likes coffee"), Fact("User likes coffee.")])
    assert [r.action for r in results] == ["inserted", "merged"]
    assert results[0].id == results[1].id
    assert len(await engine.list(OWNER)) == 1


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("User likes coffee", "User does not like coffee"),
        ("User does not like coffee", "User likes coffee"),
        ("Meeting at 3pm on Friday", "Meeting at 4pm on Friday"),
        ("用户喜欢喝咖啡", "用户不喜欢喝咖啡"),
        ("User writes C++ at work", "User writes C# at work"),
        ("😀", "🎉"),
    ],
)
async def test_different_facts_do_not_merge(engine: MemoryEngine, first: str, second: str) -> None:
    a = await engine.write(OWNER, Fact(first))
    b = await engine.write(OWNER, Fact(second))
    assert a.action == "inserted"
    assert b.action == "inserted"
    assert a.id != b.id
    assert await _live_contents(engine) == sorted([first, second])


async def test_supersede_same_subject_predicate(engine: MemoryEngine) -> None:
    old = await engine.write(
        OWNER, Fact("User lives in Beijing", subject="user", predicate="lives_in", source_ref="r1")
    )
    new = await engine.write(
        OWNER, Fact("User lives in Shanghai", subject="user", predicate="lives_in", source_ref="r2")
    )
    assert new.action == "superseded"
    assert new.replaced_id == old.id
    assert new.id != old.id
    old_mem = await engine.get(OWNER, old.id)
    new_mem = await engine.get(OWNER, new.id)
    assert old_mem is not None and new_mem is not None
    assert old_mem.is_archived and old_mem.superseded_by == new.id
    assert old_mem.content == "User lives in Beijing"  # archived, not rewritten
    assert not new_mem.is_archived and new_mem.superseded_by is None
    assert new_mem.refs == ["r2"]
    assert await _live_contents(engine) == ["User lives in Shanghai"]
    assert {m.id for m in await engine.list(OWNER, include_archived=True)} == {old.id, new.id}
    assert [h.id for h in await engine.search(OWNER, "Beijing Shanghai lives")] == [new.id]


async def test_supersede_chain_keeps_latest_only(engine: MemoryEngine) -> None:
    ids = []
    for city in ("Beijing", "Shanghai", "Shenzhen"):
        r = await engine.write(OWNER, Fact(f"User lives in {city}", subject="user", predicate="lives_in"))
        ids.append(r.id)
    assert await _live_contents(engine) == ["User lives in Shenzhen"]
    first, second = await engine.get(OWNER, ids[0]), await engine.get(OWNER, ids[1])
    assert first is not None and second is not None
    assert first.superseded_by == ids[1] and second.superseded_by == ids[2]


async def test_different_predicate_does_not_supersede(engine: MemoryEngine) -> None:
    a = await engine.write(OWNER, Fact("User lives in Beijing", subject="user", predicate="lives_in"))
    b = await engine.write(OWNER, Fact("User works in Shanghai", subject="user", predicate="works_in"))
    assert b.action == "inserted"
    assert {m.id for m in await engine.list(OWNER)} == {a.id, b.id}


@pytest.mark.parametrize("again", ["User lives in Beijing", "user lives in BEIJING!"])
async def test_same_subject_predicate_same_content_merges(engine: MemoryEngine, again: str) -> None:
    first = await engine.write(
        OWNER, Fact("User lives in Beijing", subject="user", predicate="lives_in", source_ref="r1")
    )
    second = await engine.write(OWNER, Fact(again, subject="user", predicate="lives_in", source_ref="r2"))
    assert second.action == "merged" and second.id == first.id and second.replaced_id is None
    mem = await engine.get(OWNER, first.id)
    assert mem is not None and not mem.is_archived and mem.refs == ["r1", "r2"]
    assert len(await engine.list(OWNER, include_archived=True)) == 1


async def test_archive_is_soft_and_purge_deletes(engine: MemoryEngine) -> None:
    r = await engine.write(OWNER, Fact("User keeps a cactus named Spike", source_ref="r1"))
    assert await engine.archive(OWNER, r.id) is True
    mem = await engine.get(OWNER, r.id)
    assert mem is not None and mem.is_archived and mem.content == "User keeps a cactus named Spike"
    assert _sql(engine, "SELECT is_archived FROM memories WHERE id = ?", (r.id,)) == [(1,)]
    assert await engine.list(OWNER) == []
    assert [m.id for m in await engine.list(OWNER, include_archived=True)] == [r.id]
    assert await engine.search(OWNER, "cactus Spike") == []
    assert await engine.archive(OWNER, r.id) is False  # already archived

    assert await engine.purge(OWNER, r.id) is True
    assert await engine.get(OWNER, r.id) is None
    assert _sql(engine, "SELECT COUNT(*) FROM memories WHERE id = ?", (r.id,)) == [(0,)]
    assert _sql(engine, "SELECT COUNT(*) FROM memory_refs WHERE memory_id = ?", (r.id,)) == [(0,)]
    fts = _sql(engine, "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?", ('"cactus"',))
    assert fts == []
    assert await engine.purge(OWNER, r.id) is False


async def test_purge_of_a_superseding_row_unlinks_the_old_one(engine: MemoryEngine) -> None:
    old = await engine.write(OWNER, Fact("User lives in Beijing", subject="user", predicate="lives_in"))
    new = await engine.write(OWNER, Fact("User lives in Shanghai", subject="user", predicate="lives_in"))
    assert await engine.purge(OWNER, new.id) is True
    old_mem = await engine.get(OWNER, old.id)
    assert old_mem is not None and old_mem.superseded_by is None and old_mem.is_archived


async def test_archived_row_is_not_a_merge_target(engine: MemoryEngine) -> None:
    first = await engine.write(OWNER, Fact("User likes coffee."))
    assert await engine.archive(OWNER, first.id)
    again = await engine.write(OWNER, Fact("User likes coffee."))
    assert again.action == "inserted" and again.id != first.id


@pytest.mark.parametrize(
    ("fact", "field"),
    [
        (Fact(""), "content"),
        (Fact("   \n\t "), "content"),
        (Fact("\x00"), "content"),
        (Fact(" \x00 \x00 "), "content"),
        (Fact("ok", category="bogus"), "category"),
        (Fact("ok", category=""), "category"),
        (Fact("ok", importance=-0.01), "importance"),
        (Fact("ok", importance=1.5), "importance"),
        (Fact("ok", importance=float("nan")), "importance"),
        (Fact("ok", tier=3), "tier"),
        (Fact("ok", tier=0), "tier"),
    ],
    ids=[
        "empty",
        "whitespace",
        "nul-only",
        "nul-and-space",
        "bad-category",
        "empty-category",
        "importance-neg",
        "importance-high",
        "importance-nan",
        "tier3",
        "tier0",
    ],
)
async def test_invalid_writes_are_rejected(engine: MemoryEngine, fact: Fact, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        await engine.write(OWNER, fact)
    assert _sql(engine, "SELECT COUNT(*) FROM memories") == [(0,)]


async def test_invalid_fact_in_a_batch_rolls_back_the_batch(engine: MemoryEngine) -> None:
    with pytest.raises(ValueError, match="tier"):
        await engine.write_many(OWNER, [Fact("User likes coffee"), Fact("bad", tier=3)])
    assert _sql(engine, "SELECT COUNT(*) FROM memories") == [(0,)]
    # The engine is still usable after the rollback.
    assert (await engine.write(OWNER, Fact("User likes coffee"))).action == "inserted"


@pytest.mark.parametrize("owner", ["", "   "])
async def test_empty_owner_is_rejected(engine: MemoryEngine, owner: str) -> None:
    with pytest.raises(ValueError, match="owner"):
        await engine.write(owner, Fact("User likes coffee"))


async def test_boundary_importance_and_every_category_accepted(engine: MemoryEngine) -> None:
    from memory.retrieval.decay import CATEGORIES

    for i, category in enumerate(CATEGORIES):
        importance = (0.0, 1.0)[i % 2]
        r = await engine.write(
            OWNER, Fact(f"fact number {category} kept", category=category, importance=importance)
        )
        mem = await engine.get(OWNER, r.id)
        assert mem is not None and mem.category == category and mem.importance == importance


async def test_nul_inside_content_is_removed(engine: MemoryEngine) -> None:
    r = await engine.write(OWNER, Fact("User likes\x00 green tea"))
    mem = await engine.get(OWNER, r.id)
    assert mem is not None and mem.content == "User likes green tea"


async def test_tier1_duplicates_merge(engine: MemoryEngine) -> None:
    t1 = await engine.write(OWNER, Fact("User's name is Alice", tier=1, category="identity"))
    t1b = await engine.write(OWNER, Fact("user's name is alice!", tier=1, category="identity"))
    assert (t1b.action, t1b.id) == ("merged", t1.id)
    assert [m.id for m in await engine.profile(OWNER)] == [t1.id]


async def test_edit_changes_content_and_reindexes(engine: MemoryEngine) -> None:
    r = await engine.write(OWNER, Fact("User drinks oolong tea"))
    mem = await engine.edit(OWNER, r.id, content="User drinks jasmine tea", importance=0.9)
    assert mem.content == "User drinks jasmine tea" and mem.importance == pytest.approx(0.9)
    assert [h.id for h in await engine.search(OWNER, "jasmine")] == [r.id]
    assert await engine.search(OWNER, "oolong") == []
    with pytest.raises(ValueError, match="category"):
        await engine.edit(OWNER, r.id, category="bogus")
    with pytest.raises(KeyError):
        await engine.edit(OWNER, 9999, content="nothing here")

"""The store contract, part 1: memories, their references, full-text candidates, vectors and the memory
page's reads, run against both stores (``store`` fixture: SQLite, then PostgreSQL)."""

from __future__ import annotations

import pytest

from memory.records import Fact
from memory.store import NewRow
from memory.store.protocol import MemoryStore
from memory.text import tokenizer

T0 = "2026-01-02 03:04:05"
T1 = "2026-01-03 00:00:00"


async def _add(store: MemoryStore, owner: str, content: str, **fields: object) -> int:
    fact = Fact(content=content, **fields)  # type: ignore[arg-type]
    text = tokenizer.index_text(content)
    return await store.memories.insert(owner, fact, NewRow(content.lower(), text, T0))


async def test_insert_get_list_and_refs(store: MemoryStore) -> None:
    first = await _add(store, "alice", "Alice drinks green tea", source_ref="telegram:1")
    second = await _add(store, "alice", "Alice lives in Lyon", tier=1, project="home")
    await _add(store, "bob", "Bob plays chess")
    assert second > first
    mem = await store.memories.get("alice", first)
    assert mem is not None and mem.content == "Alice drinks green tea" and mem.refs == ["telegram:1"]
    assert mem.created_at == T0 and mem.is_archived is False and mem.importance == 0.5
    assert await store.memories.get("bob", first) is None  # another owner's id gives nothing
    assert [m.id for m in await store.memories.list("alice")] == [second, first]
    assert [m.id for m in await store.memories.list("alice", tier=1, project="home")] == [second]
    assert await store.memories.owner_of(first) == "alice" and await store.memories.owner_of(10**9) is None
    await store.memories.add_ref(first, "telegram:2")
    await store.memories.add_ref(first, "telegram:2")  # kept once
    await store.memories.copy_refs(second, [first])
    assert await store.memories.refs("alice", [first, second]) == {
        first: ["telegram:1", "telegram:2"],
        second: ["telegram:1", "telegram:2"],
    }
    assert await store.memories.counts("alice") == {"tier1": 1, "tier2": 1, "archived": 0}
    assert await store.memories.counts(None) == {"tier1": 1, "tier2": 2, "archived": 0}
    assert await store.memories.projects("alice") == frozenset()  # tier 1's project is not a tier 2 one
    assert await store.memories.partitions("alice", 1) == [("home", "_general", 1)]


async def test_live_lookups_of_the_write_path(store: MemoryStore) -> None:
    a = await _add(
        store, "alice", "Alice works at Acme", subject="alice", predicate="works_at", importance=0.9
    )
    b = await _add(store, "alice", "Alice likes tea", category="preference", importance=0.2)
    assert await store.memories.same_subject("alice", "alice", "works_at") == [(a, "alice works at acme")]
    assert await store.memories.same_key("alice", "alice likes tea", 2) == b
    assert await store.memories.same_key("alice", "alice likes tea", 1) is None
    assert await store.memories.live_keys("alice", [a, b, 999]) == {
        a: ("alice works at acme", 2),
        b: ("alice likes tea", 2),
    }
    live = await store.memories.live("alice", tier=2, order="importance")
    assert [m.id for m in live] == [a, b]
    assert [m.id for m in await store.memories.live("alice", tier=2, categories=["preference"])] == [b]
    assert [m.id for m in await store.memories.live("alice", tier=2, min_importance=0.5, limit=5)] == [a]


async def test_updates_archive_restore_supersede_and_purge(store: MemoryStore) -> None:
    a = await _add(store, "alice", "Alice has a cat")
    b = await _add(store, "alice", "Alice has two cats")
    await store.memories.merge_into(a, 0.8, T1)
    await store.memories.raise_importance(a, 0.3)  # lower: kept at 0.8
    mem = await store.memories.get("alice", a)
    assert mem is not None and mem.importance == 0.8 and mem.access_count == 1 and mem.updated_at == T1
    await store.memories.supersede([a], b, T1)
    assert await store.memories.archived_among([a, b]) == [a]
    assert await store.browse.superseded_into("alice", b) == [a]
    assert await store.memories.restore("alice", a, T1) is True
    assert await store.memories.restore("alice", a, T1) is False  # live already
    assert await store.memories.archive("alice", [a, b], T1) == 2
    assert await store.memories.archive("bob", [a], T1) == 0
    await store.memories.restore("alice", b, T1)
    fact = Fact(content="Alice has three cats", importance=0.7)
    await store.memories.update(
        "alice", b, fact, norm_key="alice has three cats", search_text="alic has three cat", now=T1
    )
    assert (await store.memories.get("alice", b)).content == "Alice has three cats"  # type: ignore[union-attr]
    await store.memories.touch([b], T1)
    assert await store.memories.purge("alice", a) == "Alice has a cat"
    assert await store.memories.purge("alice", a) is None
    assert await store.memories.get("alice", a) is None


async def test_full_text_candidates_rank_best_first_and_filter_owner(store: MemoryStore) -> None:
    tea = await _add(store, "alice", "Alice drinks green tea every morning, green tea only")
    await _add(store, "alice", "Alice's brother sells tea and coffee beans at the market downtown")
    await _add(store, "alice", "Alice plays chess")
    await _add(store, "bob", "Bob drinks green tea")
    terms = list(tokenizer.query_terms("green tea"))
    found = await store.search.matches("alice", terms, tiers=(1, 2), limit=10)
    assert found[0].id == tea and len(found) == 2
    assert all(c.owner == "alice" for c in found)
    assert found[0].text_score > found[1].text_score > 0
    newest = await store.search.matches("alice", terms, tiers=(2,), limit=1, newest_first=True)
    assert len(newest) == 1 and newest[0].id != tea
    assert await store.search.matches("alice", terms, tiers=(1,), limit=10) == []
    both = await store.search.containing_all("alice", terms, 2)
    assert [row[0] for row in both] == [tea]
    frequencies = await store.search.document_frequencies(tuple(terms))
    assert frequencies == {tokenizer.stem("green"): 2, "tea": 3}
    assert [c.id for c in await store.search.by_ids("alice", [tea])] == [tea]
    assert await store.search.by_ids("bob", [tea]) == []
    assert [c.text_score for c in await store.search.in_project("alice", "_global", (2,), 5)] == [0.0] * 3
    window = await store.search.written_between("alice", T0, T1, (2,), 10)
    assert len(window) == 3


async def test_chinese_and_emoji_text_is_kept_and_found(store: MemoryStore) -> None:
    content = "我喜欢在杭州西湖边喝龙井茶 🍵"
    mid = await _add(store, "张三", content)
    assert (await store.memories.get("张三", mid)).content == content  # type: ignore[union-attr]
    terms = list(tokenizer.query_terms("龙井茶"))
    found = await store.search.matches("张三", terms, tiers=(2,), limit=5)
    assert [c.id for c in found] == [mid]


async def test_nul_is_refused_before_anything_is_written(store: MemoryStore) -> None:
    with pytest.raises(ValueError, match="NUL"):
        await _add(store, "alice", "before\x00after")
    assert await store.memories.counts(None) == {"tier1": 0, "tier2": 0, "archived": 0}


async def test_memory_vectors_and_the_cache(store: MemoryStore) -> None:
    a = await _add(store, "alice", "Alice drinks tea")
    assert await store.vectors.missing("m1") == [(a, "alice", "Alice drinks tea")]
    assert await store.vectors.count_missing("m1", "alice") == 1
    updated, owners = await store.vectors.set("m1", [(a, "Alice drinks tea", b"\x00\x01")])
    assert (updated, owners) == (1, ["alice"])
    assert await store.vectors.of_owner("alice", "m1") == [(a, 2, b"\x00\x01")]
    assert await store.vectors.count_missing("m1") == 0 and await store.vectors.count_missing("m2") == 1
    assert await store.memories.live_embedded_content("alice", a, 2, "m1") == "Alice drinks tea"
    await store.vectors.cache("m1", [("h1", 2, b"ab"), ("h2", 2, b"cd")], [], T0)
    await store.vectors.cache("m1", [("h1", 3, b"xyz")], ["h2"], T1)  # replaces h1, touches h2
    assert sorted(map(tuple, await store.vectors.cached("m1", ["h1", "h2", "h3"]))) == [
        ("h1", 3, b"xyz", T1),
        ("h2", 2, b"cd", T1),
    ]
    assert await store.vectors.cache_counts() == {"m1": 2}
    await store.vectors.uncache("h1")
    assert await store.vectors.evict_cached("2027-01-01 00:00:00") == 1
    assert await store.vectors.cache_counts() == {}


async def test_browse_reads(store: MemoryStore) -> None:
    a = await _add(store, "alice", "Alice owns 100% of Tea_Co", category="fact")
    b = await _add(store, "alice", "Alice likes jazz", category="preference", project="music")
    keys = await store.browse.keys("alice", now="2026-01-04 03:04:05")
    assert [k.id for k in keys] == [b, a] and keys[0].idle_days == pytest.approx(2.0)
    assert [k.id for k in await store.browse.keys("alice", contains="100%", now=T1)] == [a]
    assert [k.id for k in await store.browse.keys("alice", contains="TEA_co", now=T1)] == [a]
    assert await store.browse.keys("alice", contains="0%%", now=T1) == []
    assert [k.id for k in await store.browse.keys("alice", ids=[a], archived="all", now=T1)] == [a]
    assert [m.id for m in await store.browse.by_ids("alice", [a, b])] == [a, b]
    assert await store.browse.categories_and_projects("alice") == (
        ["fact", "preference"],
        ["_global", "music"],
    )
    assert await store.browse.created_per_day("alice") == [
        ("2026-01-02", "fact", 1),
        ("2026-01-02", "preference", 1),
    ]
    with pytest.raises(ValueError):
        await store.browse.keys("alice", archived="maybe", now=T1)

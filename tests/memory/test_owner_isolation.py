"""No call for one owner ever returns, merges into, or changes another owner's memories or events."""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.engine import MemoryEngine
from memory.records import Fact

OWNERS = ("a", "b", "c")
WORDS = (
    "coffee",
    "tea",
    "python",
    "deploy",
    "server",
    "myclaw",
    "not",
    "3pm",
    "咖啡",
    "部署",
    "服务器",
    "北京",
    "公司",
    "喜欢",
    "不",
    "项目",
    "机器人",
)


def _sql(path: str, query: str, params: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(query, params).fetchall()
    finally:
        conn.close()


def _snapshot(path: str, owner: str | None = None) -> list[tuple]:
    """Every memory row (optionally excluding one owner's), plus its refs, straight from the file."""
    mems = _sql(path, "SELECT * FROM memories WHERE owner IS NOT ? ORDER BY id", (owner,))
    refs = _sql(
        path,
        "SELECT r.memory_id, r.ref FROM memory_refs r JOIN memories m ON m.id = r.memory_id "
        "WHERE m.owner IS NOT ? ORDER BY 1, 2",
        (owner,),
    )
    events = _sql(path, "SELECT * FROM daily_events WHERE owner IS NOT ? ORDER BY id", (owner,))
    return [*mems, *refs, *events]


def _memory_owner(path: str, memory_id: int) -> str | None:
    rows = _sql(path, "SELECT owner FROM memories WHERE id = ?", (memory_id,))
    return rows[0][0] if rows else None


def _event_owner(path: str, event_id: int) -> str | None:
    rows = _sql(path, "SELECT owner FROM daily_events WHERE id = ?", (event_id,))
    return rows[0][0] if rows else None


content_text = st.tuples(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), st.sampled_from([" ", "", "，", ". "])
).map(lambda t: t[1].join(t[0]))

entry = st.fixed_dictionaries(
    {
        "owner": st.sampled_from(OWNERS),
        "content": content_text,
        "project": st.sampled_from(["_global", "myclaw", "alpha"]),
        "tier": st.sampled_from([1, 2, 2, 2]),
        "kind": st.sampled_from(["fact", "fact", "fact", "keyed", "event"]),
        "ref": st.sampled_from([None, "tg:1", "tg:2", "fs:9"]),
    }
)
query_text = content_text | st.text(max_size=30)


async def _check_reads(eng: MemoryEngine, path: str, owner: str, query: str) -> None:
    seen: set[int] = set()
    for hit in await eng.retrieve(owner, query):
        seen.add(hit.id)
    for hit in await eng.search(owner, query, k=50):
        seen.add(hit.id)
    for mem in await eng.list(owner, include_archived=True, limit=1000):
        assert mem.owner == owner
        seen.add(mem.id)
    for mem in await eng.profile(owner):
        assert mem.owner == owner
        seen.add(mem.id)
    for mid in seen:
        assert _memory_owner(path, mid) == owner, (owner, query, mid)
        got = await eng.get(owner, mid)
        assert got is not None and got.owner == owner
    assert set(await eng.refs(owner, sorted(seen))) <= seen
    for ev in [*await eng.events.find(owner, query=query), *await eng.events.find(owner, limit=1000)]:
        assert ev.owner == owner
        assert _event_owner(path, ev.id) == owner, (owner, query, ev.id)


async def _check_foreign_mutations(eng: MemoryEngine, path: str) -> None:
    before = _snapshot(path)
    for mid, row_owner in _sql(path, "SELECT id, owner FROM memories"):
        for other in OWNERS:
            if other == row_owner:
                continue
            assert await eng.get(other, mid) is None
            assert await eng.refs(other, [mid]) == {}
            with pytest.raises(KeyError):
                await eng.edit(other, mid, content="hijacked by someone else")
            assert await eng.archive(other, mid) is False
            assert await eng.purge(other, mid) is False
    assert _snapshot(path) == before


def _run_scenario(entries: list[dict], queries: list[str]) -> None:
    async def body(path: str) -> None:
        async with await MemoryEngine.open(path) as eng:
            for e in entries:
                owner = e["owner"]
                others_before = _snapshot(path, owner)
                if e["kind"] == "event":
                    eid = await eng.events.add(
                        owner, e["content"], event_date="2024-03-01", source_ref=e["ref"]
                    )
                    assert _event_owner(path, eid) == owner
                else:
                    keyed = e["kind"] == "keyed"
                    fact = Fact(
                        e["content"],
                        tier=e["tier"],
                        project=e["project"],
                        category="identity" if e["tier"] == 1 else "event",
                        source_ref=e["ref"],
                        subject="user" if keyed else None,
                        predicate="likes" if keyed else None,
                    )
                    result = await eng.write(owner, fact)
                    assert _memory_owner(path, result.id) == owner
                    if result.replaced_id is not None:
                        assert _memory_owner(path, result.replaced_id) == owner
                # A write by one owner never touches another owner's rows.
                assert _snapshot(path, owner) == others_before
            for query in queries:
                for owner in OWNERS:
                    await _check_reads(eng, path, owner, query)
            await _check_foreign_mutations(eng, path)

    with tempfile.TemporaryDirectory(prefix="tierclaw-owners-") as tmp:
        asyncio.run(body(str(Path(tmp) / "memory.db")))


@settings(max_examples=25, deadline=None)
@given(entries=st.lists(entry, min_size=1, max_size=12), queries=st.lists(query_text, min_size=1, max_size=4))
def test_owners_never_see_or_change_each_others_rows(entries: list[dict], queries: list[str]) -> None:
    _run_scenario(entries, queries)


def test_same_content_for_every_owner_explicit() -> None:
    """The worst case for merging, spelled out: every owner writes the same things."""
    entries = [
        {"owner": o, "content": c, "project": p, "tier": 2, "kind": k, "ref": f"{o}:1"}
        for c, p, k in [
            ("User likes coffee.", "myclaw", "fact"),
            ("the user likes coffee", "myclaw", "fact"),
            ("用户 喜欢 咖啡", "_global", "keyed"),
            ("部署 服务器 北京", "alpha", "event"),
        ]
        for o in OWNERS
    ]
    _run_scenario(entries, ["coffee", "myclaw", "咖啡", "部署", "alpha project server"])


async def test_no_cross_owner_merge_or_supersede(engine: MemoryEngine) -> None:
    a = await engine.write("a", Fact("User likes coffee.", source_ref="a1"))
    b = await engine.write("b", Fact("User likes coffee.", source_ref="b1"))
    b_near = await engine.write("b", Fact("The user likes coffee", source_ref="b2"))
    assert a.action == b.action == "inserted" and a.id != b.id
    assert (b_near.action, b_near.id) == ("merged", b.id)
    a_mem = await engine.get("a", a.id)
    assert a_mem is not None and a_mem.refs == ["a1"] and a_mem.access_count == 0

    a_city = await engine.write("a", Fact("User lives in Beijing", subject="user", predicate="lives_in"))
    b_city = await engine.write("b", Fact("User lives in Shanghai", subject="user", predicate="lives_in"))
    assert b_city.action == "inserted" and b_city.replaced_id is None
    a_city_mem = await engine.get("a", a_city.id)
    assert a_city_mem is not None and not a_city_mem.is_archived and a_city_mem.superseded_by is None


async def test_known_projects_are_per_owner(engine: MemoryEngine) -> None:
    await engine.write("b", Fact("Deploy with docker compose and nginx", project="myclaw"))
    await engine.write("a", Fact("User prefers vim keybindings"))
    assert await engine.known_projects("a") == frozenset()
    assert await engine.known_projects("b") == frozenset({"myclaw"})
    assert await engine.retrieve("a", "how is myclaw going?") == []
    assert await engine.search("a", "docker nginx deploy") == []
    assert len(await engine.retrieve("b", "how is myclaw going?")) == 1


async def test_events_are_per_owner(engine: MemoryEngine) -> None:
    await engine.events.add("a", "讨论了部署方案", event_date="2024-03-01")
    b_event = await engine.events.add("b", "讨论了部署方案", event_date="2024-03-01")
    assert [e.id for e in await engine.events.find("b", query="部署")] == [b_event]
    assert [e.id for e in await engine.events.find("b", since="2024-01-01")] == [b_event]
    assert await engine.events.find("c") == []
    assert await engine.events.find("c", query="部署") == []

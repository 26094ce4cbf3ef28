"""The change versions every store keeps (``memory/store/changes.py``): what another open store wrote is
told once, by kind and key, with the row delta; a rolled-back write tells nothing; a reader that slept
past the pruned range is told that everything may have changed; reads happen at most once per interval."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from memory.records import Fact
from memory.store import NewRow, changes
from memory.store.open import open_store
from memory.store.protocol import MemoryStore

T0 = "2026-01-02 03:04:05"
Told = list[tuple[str, str | None, int]]


@pytest.fixture
async def other(memory_db: str) -> AsyncIterator[MemoryStore]:
    """A second open store on the same database (another process's connection)."""
    opened = await open_store(memory_db, warm_text=False)
    try:
        yield opened
    finally:
        await opened.close()


def _listen(store: MemoryStore) -> Told:
    told: Told = []
    for kind in changes.KINDS:
        store.changes.listen(kind, lambda key, delta, kind=kind: told.append((kind, key, delta)))
    return told


async def test_a_rolled_back_write_tells_nothing(store: MemoryStore, other: MemoryStore) -> None:
    told = _listen(store)
    with pytest.raises(RuntimeError, match="changed my mind"):
        async with other.transaction():
            await other.memories.insert("alice", Fact(content="tea"), NewRow("tea", "tea", T0))
            raise RuntimeError("changed my mind")
    await other.sessions.start("telegram:1", 2, T0)
    await store.changes.refresh(force=True)
    assert told == [("session", "telegram:1", 0)]


async def test_one_transaction_is_one_version_with_each_key_once(
    store: MemoryStore, other: MemoryStore
) -> None:
    told = _listen(store)
    async with other.transaction():
        for text in ("tea", "coffee"):
            await other.memories.insert("alice", Fact(content=text), NewRow(text, text, T0))
        await other.memories.insert("bob", Fact(content="milk"), NewRow("milk", "milk", T0))
    await store.changes.refresh(force=True)
    assert sorted(told) == [("memories", "alice", 2), ("memories", "bob", 1)]
    before = store.changes.seen  # type: ignore[attr-defined]
    await other.sessions.start("telegram:1", 2, T0)
    await store.changes.refresh(force=True)
    assert store.changes.seen == before + 1  # type: ignore[attr-defined]


async def test_reads_wait_for_the_interval(store: MemoryStore, other: MemoryStore) -> None:
    now = [50.0]
    feed = store.changes
    feed.clock = lambda: now[0]  # type: ignore[attr-defined]
    await feed.refresh(force=True)
    told = _listen(store)
    reads = feed.reads  # type: ignore[attr-defined]
    await other.sessions.start("telegram:1", 2, T0)
    await feed.refresh()
    assert told == [] and feed.reads == reads  # type: ignore[attr-defined]
    now[0] += feed.interval_s  # type: ignore[attr-defined]
    await feed.refresh()
    await feed.refresh()
    assert told == [("session", "telegram:1", 0)] and feed.reads == reads + 1  # type: ignore[attr-defined]


async def test_a_reader_behind_the_pruned_changes_is_told_everything(
    store: MemoryStore, other: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(changes, "KEEP_CHANGES", 2)
    monkeypatch.setattr(changes, "PRUNE_EVERY", 3)
    monkeypatch.setattr(changes, "PARTS", 1)  # every key in one part of the clock: its versions reach 6
    told = _listen(store)
    for n in range(6):
        await other.sessions.start(f"telegram:{n}", 2, T0)
    await store.changes.refresh(force=True)
    assert set(told) >= {("memories", None, 0), ("vectors", None, 0), ("session", None, 0)}
    told.clear()
    await other.sessions.start("telegram:9", 2, T0)
    await store.changes.refresh(force=True)
    assert told == [("session", "telegram:9", 0)]


async def test_an_unknown_kind_is_refused(store: MemoryStore) -> None:
    with pytest.raises(ValueError, match="unknown change kind"):
        store.changes.listen("weather", lambda key, delta: None)

"""The term counts bm25 reads (how many memories hold a term, all owners) stay right on both stores while
PostgreSQL's trigger only appends deltas and a fold moves them into ``memory_terms`` now and then (schema
version 20, issue 38 item 5): before the fold, after it, after an edit and a purge, and as another open
store (another replica) reads them."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from memory.records import Fact
from memory.store import NewRow
from memory.store.open import open_store
from memory.store.postgres import search as pg_search
from memory.store.protocol import MemoryStore
from memory.text import tokenizer

T0 = "2026-01-02 03:04:05"


@pytest.fixture
async def other(memory_db: str) -> AsyncIterator[MemoryStore]:
    opened = await open_store(memory_db, warm_text=False)
    try:
        yield opened
    finally:
        await opened.close()


async def _add(store: MemoryStore, owner: str, content: str) -> int:
    row = NewRow(content.lower(), tokenizer.index_text(content), T0)
    return await store.memories.insert(owner, Fact(content=content), row)


async def _counts(store: MemoryStore, *words: str) -> dict[str, int]:
    await store.changes.refresh(force=True)  # another store's writes drop the cached counts
    terms = tuple(tokenizer.stem(w) for w in words)
    return dict(zip(words, (await store.search.document_frequencies(terms)).values(), strict=True))


async def test_counts_before_and_after_folds(
    store: MemoryStore, other: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pg_search, "FOLD_EVERY_S", 0.0)
    tea = await _add(store, "alice", "green tea")
    await _add(store, "bob", "green tea leaves")
    await _add(other, "carol", "black tea")
    assert await _counts(other, "green", "tea", "black", "coffee") == {
        "green": 2,
        "tea": 3,
        "black": 1,
        "coffee": 0,
    }
    await store.search.fold_terms()
    await _add(store, "alice", "black coffee")  # after the fold: in the deltas again
    assert await _counts(other, "green", "tea", "black", "coffee") == {
        "green": 2,
        "tea": 3,
        "black": 2,
        "coffee": 1,
    }
    await other.search.fold_terms()
    await other.search.fold_terms()  # nothing left to fold: nothing changes
    assert await store.memories.purge("alice", tea) is not None
    assert await _counts(other, "green", "tea", "black", "coffee") == {
        "green": 1,
        "tea": 2,
        "black": 2,
        "coffee": 1,
    }
    await store.search.fold_terms()
    assert await _counts(other, "green", "tea", "black", "coffee") == {
        "green": 1,
        "tea": 2,
        "black": 2,
        "coffee": 1,
    }


async def test_a_reader_folds_deltas_that_piled_up(
    store: MemoryStore, other: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes whose deltas nobody folded (no write came after them) are folded by a reader that sums
    many of them; the counts it reads are the same before and after."""
    monkeypatch.setattr(pg_search, "FOLD_EVERY_S", 3600.0)  # the writer's own fold: the first write only
    monkeypatch.setattr(pg_search, "FOLD_ROWS", 2)
    for n in range(5):
        await _add(store, f"owner{n}", "plum jam")
    assert await _counts(other, "plum", "jam") == {"plum": 5, "jam": 5}
    if store.db.kind == "postgresql":  # type: ignore[attr-defined]
        left = await other.db.scalar("SELECT COUNT(*) FROM memory_term_deltas")  # type: ignore[attr-defined]
        assert left == 0
    await store.changes.refresh(force=True)
    assert await _counts(store, "plum", "jam") == {"plum": 5, "jam": 5}

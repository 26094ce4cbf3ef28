"""Both stores rank the same: the same rows written into a SQLite file and a PostgreSQL database give the
same full-text candidates, in the same order, with the same bm25 (docs/architecture.md, "Storage")."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from memory.records import Fact
from memory.store import NewRow
from memory.store.open import open_store
from memory.store.postgres.fulltext import TableSize
from memory.store.protocol import MemoryStore
from memory.text import tokenizer

WORDS = [
    "tea",
    "coffee",
    "green",
    "kyoto",
    "hiking",
    "chess",
    "jazz",
    "piano",
    "market",
    "brother",
    "sister",
    "dog",
    "cat",
    "garden",
    "rain",
]
CHINESE = ["喝茶", "杭州", "西湖", "下棋", "爬山", "音乐", "弟弟", "市场"]
QUERIES = [
    "green tea",
    "kyoto hiking",
    "brother market coffee",
    "西湖 喝茶",
    "piano jazz rain",
    "dog",
    "piano jazz rain garden chess",  # five terms: the candidate query's text pads them to eight places
]


async def _fill(store: MemoryStore) -> None:
    rng = random.Random(7)
    for i in range(120):
        owner = "alice" if i % 3 else "bob"
        words = rng.choices(WORDS, k=rng.randint(3, 12)) + rng.choices(CHINESE, k=rng.randint(0, 2))
        content = " ".join(words)
        text = tokenizer.index_text(content)
        await store.memories.insert(
            owner, Fact(content=content), NewRow(content, text, "2026-01-01 00:00:00")
        )
        await store.turns.add(
            owner, channel="t", chat_id="c", role="user", content=content, search_text=text, at="2026-01-01"
        )


@pytest.fixture
async def both(tmp_path: Path, postgres_url: str) -> list[MemoryStore]:
    stores = [await open_store(str(tmp_path / "m.db")), await open_store(postgres_url)]
    for store in stores:
        await _fill(store)
    yield stores  # type: ignore[misc]
    for store in stores:
        await store.close()


@pytest.mark.parametrize("query", QUERIES)
async def test_memory_candidates_and_scores_are_equal(both: list[MemoryStore], query: str) -> None:
    terms = list(tokenizer.query_terms(query))
    sqlite, postgres = [await s.search.matches("alice", terms, tiers=(2,), limit=20) for s in both]
    assert sqlite, "the query must match something for the comparison to mean anything"
    assert [c.text_score for c in postgres] == pytest.approx([c.text_score for c in sqlite], rel=1e-9)
    # Equal scores may come in either order; the sets per score must agree.
    assert sorted((round(c.text_score, 9), c.id) for c in postgres) == sorted(
        (round(c.text_score, 9), c.id) for c in sqlite
    )
    newest = [await s.search.matches("alice", terms, tiers=(2,), limit=5, newest_first=True) for s in both]
    assert [c.id for c in newest[0]] == [c.id for c in newest[1]]


@pytest.mark.parametrize("query", QUERIES)
async def test_turn_matches_and_frequencies_are_equal(both: list[MemoryStore], query: str) -> None:
    terms = list(tokenizer.query_terms(query))
    sqlite, postgres = [await s.turns.matches("bob", terms, since=None, until=None, limit=10) for s in both]
    assert [round(r[1], 9) for r in postgres] == [round(r[1], 9) for r in sqlite]
    frequencies = [await s.turns.document_frequencies(terms) for s in both]
    assert frequencies[0] == frequencies[1]


@pytest.mark.parametrize("query", QUERIES)
async def test_postgres_server_cut_keeps_what_python_bm25_ranks_first(
    both: list[MemoryStore], query: str
) -> None:
    """PostgreSQL scores on the server and returns only the best ``limit`` (``fulltext.bm25_join``); the
    rows it keeps must be the ones Python's bm25 puts first (best score, then lowest id)."""
    postgres = both[1]
    terms = list(tokenizer.query_terms(query))
    everything = await postgres.search.matches("alice", terms, tiers=(2,), limit=1000)
    assert len(everything) > 7, "the query must match more rows than the cuts below keep"
    by_python = [c.id for c in sorted(everything, key=lambda c: (-c.text_score, c.id))]
    for limit in (1, 3, 7):
        cut = await postgres.search.matches("alice", terms, tiers=(2,), limit=limit)
        assert [c.id for c in cut] == by_python[:limit]


async def test_rows_another_replica_added_since_the_size_was_read_score_without_error(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table's size is read at most every ``TableSize.MAX_AGE_S`` while a term's document count is read
    fresh, so after another replica's inserts a term can be in more rows than the size this one holds:
    the rows are scored (idf at its floor), not a ``ValueError`` from the log of a negative number (it
    failed extraction on every replica of ``bench.replicas``)."""
    monkeypatch.setattr(TableSize, "MAX_AGE_S", 3600.0)  # the size read below stays this replica's
    reader, writer = await open_store(postgres_url), await open_store(postgres_url)

    async def add(store: MemoryStore, content: str) -> None:
        text = tokenizer.index_text(content)
        await store.turns.add(
            "bob", channel="t", chat_id="c", role="user", content=content, search_text=text, at="2026-01-01"
        )

    try:
        await add(reader, "green tea")
        assert len(await reader.turns.matches("bob", ["tea"], since=None, until=None, limit=10)) == 1
        for i in range(5):
            await add(writer, f"tea number {i}")
        found = await reader.turns.matches("bob", ["tea"], since=None, until=None, limit=10)
        assert len(found) == 6 and all(score > 0 for _, score, *_ in found)
    finally:
        await reader.close()
        await writer.close()

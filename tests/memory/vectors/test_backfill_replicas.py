"""The embedding backfill with several replicas on one database (docs/scale-out.md, "Extraction"): each
pass claims the rows of a batch before embedding them, so two replicas' backfills share the missing rows
and embed each once.

Each replica is its own ``MemoryEngine`` on one database (a fresh PostgreSQL database; a SQLite file
opened twice) with its own backfill and replica id. The embedder is ``HashEmbedder``, which records every
text it embeds; each replica's first call waits until the other replica's has begun, so the two passes
really run side by side however the machine schedules them (a ceiling, no margin).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from memory.engine import MemoryEngine
from memory.vectors.reindex import EmbeddingBackfill, RowClaims, reindex
from tests.support.hash_embedder import HashEmbedder, add

pytestmark = pytest.mark.both_stores

MODEL_KEY = "test:hash@16"


@pytest.fixture
async def engines(tmp_path: Path, memory_url: str) -> AsyncIterator[list[MemoryEngine]]:
    """Two engines on one database: two replicas' connections."""
    target: str | Path = memory_url or tmp_path / "memory.db"
    opened = [await MemoryEngine.open(target), await MemoryEngine.open(target)]
    try:
        yield opened
    finally:
        for engine in opened:
            with contextlib.suppress(Exception):
                await engine.close()


def _meeting() -> list[Callable[[int, list[str]], Awaitable[None]]]:
    """Two embedders' ``before`` hooks: each one's first call waits until the other's first call began."""
    began = [asyncio.Event(), asyncio.Event()]

    def hook(mine: int) -> Callable[[int, list[str]], Awaitable[None]]:
        async def before(call: int, texts: list[str]) -> None:
            began[mine].set()
            if call == 1:
                async with asyncio.timeout(30):
                    await began[1 - mine].wait()

        return before

    return [hook(0), hook(1)]


async def _missing(engine: MemoryEngine) -> int:
    return await engine.vectors.count_missing_embeddings(MODEL_KEY)


async def test_two_replicas_backfills_embed_each_row_once(engines: list[MemoryEngine]) -> None:
    await add(engines[0], "alice", 0, 40)  # written before embeddings were enabled
    embedders = [HashEmbedder(before=hook) for hook in _meeting()]
    backfills = [
        EmbeddingBackfill(engine, embedder, batch_size=4, pause=0, interval=3600, replica=f"r{i}")
        for i, (engine, embedder) in enumerate(zip(engines, embedders, strict=True), 1)
    ]
    for backfill in backfills:
        backfill.start()
    try:
        async with asyncio.timeout(60):  # the backfills finish
            while await _missing(engines[0]) or not all(b.passes for b in backfills):
                await asyncio.sleep(0.02)
    finally:
        for backfill in backfills:
            await backfill.stop()
    embedded = Counter(embedders[0].texts + embedders[1].texts)
    assert len(embedded) == 40 and set(embedded.values()) == {1}  # every row, each by one replica
    assert all(embedder.texts for embedder in embedders)  # and both did a share
    results = [b.last_result for b in backfills]
    assert sum(r.embedded for r in results if r) == 40
    assert await engines[1].store.embedding_claims.count() == 0  # claims dropped once stored


async def test_rows_claimed_by_a_dead_replica_wait_for_its_lease(engines: list[MemoryEngine]) -> None:
    # A replica claimed four rows and died before storing them: a pass skips them while the claim
    # holds, and a pass after the lease ran out embeds them.
    ids = await add(engines[0], "alice", 0, 6)
    dead = RowClaims(engines[0].store.embedding_claims, "memories", "r-dead", lease=3600)
    assert await dead.take(ids[:4]) == set(ids[:4])
    claims = RowClaims(engines[1].store.embedding_claims, "memories", "r2")
    embedder = HashEmbedder()
    first = await reindex(engines[1].vectors, embedder, batch_size=4, claims=claims)
    assert (first.embedded, first.elsewhere) == (2, 4) and await _missing(engines[1]) == 4
    # its lease runs out (on the database's clock: the same claims, with a lease that ended a second ago)
    ended = RowClaims(engines[0].store.embedding_claims, "memories", "r-dead", lease=-1)
    assert await ended.take(ids[:4]) == set(ids[:4])
    second = await reindex(engines[1].vectors, embedder, batch_size=4, claims=claims)
    assert (second.embedded, second.elsewhere) == (4, 0) and await _missing(engines[1]) == 0
    assert len(embedder.texts) == len(set(embedder.texts)) == 6

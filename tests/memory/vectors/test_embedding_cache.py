"""CachedEmbedder: persistent passage cache (hits, staleness, eviction, persistence) and the query LRU."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from memory.engine import MemoryEngine
from memory.vectors.cache import CachedEmbedder, blob_to_vector, text_hash, vector_to_blob
from tests.support.sqlite_peek import sql as _sql

try:
    from memory.vectors.embedding import EmbeddingError
except ImportError:  # memory/embedding.py not landed yet: the cache only lets the inner error through

    class EmbeddingError(RuntimeError):  # type: ignore[no-redef]
        pass


T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


class FakeEmbedder:
    """Deterministic unit vectors from (salt, kind, text); records every call so tests count work done."""

    def __init__(self, model_key: str = "fake:m", dim: int | None = 8, *, out_dim: int | None = None) -> None:
        self.model_key = model_key
        self.dim = dim
        self.uses_local_cores = False
        self.out_dim = out_dim or dim or 8
        self.passage_calls: list[list[str]] = []
        self.query_calls: list[list[str]] = []
        self.fail = False
        self.closed = False

    def vector(self, text: str, kind: str = "passage") -> np.ndarray:
        seed = hashlib.sha256(f"{self.model_key}/{self.out_dim}/{kind}/{text}".encode()).digest()
        v = np.random.default_rng(list(seed)).standard_normal(self.out_dim).astype(np.float32)
        return v / np.linalg.norm(v)

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.passage_calls.append(list(texts))
        if self.fail:
            raise EmbeddingError("model down")
        return np.stack([self.vector(t) for t in texts])

    async def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.query_calls.append(list(texts))
        if self.fail:
            raise EmbeddingError("model down")
        return np.stack([self.vector(t, "query") for t in texts])

    async def close(self) -> None:
        self.closed = True

    @property
    def embedded(self) -> int:
        return sum(len(c) for c in self.passage_calls)


def _rows(engine: MemoryEngine) -> list[tuple]:
    return _sql(engine, "SELECT text_hash, model, dim, length(vector), last_used FROM embedding_cache")


# ----------------------------------------------------------------- helpers


def test_blob_round_trip_is_float32_little_endian() -> None:
    v = np.array([1.0, -2.5, 0.125], dtype=np.float64)
    blob = vector_to_blob(v)
    assert blob == np.array(v, dtype="<f4").tobytes() and len(blob) == 12
    back = blob_to_vector(blob, 3)
    assert back is not None and back.dtype == np.float32
    np.testing.assert_array_equal(back, v.astype(np.float32))
    assert blob_to_vector(blob[:-1], 3) is None  # truncated
    assert blob_to_vector(blob, 4) is None  # wrong dimension


def test_text_hash_is_sha256_of_exact_utf8() -> None:
    assert text_hash("我喜欢咖啡") == hashlib.sha256("我喜欢咖啡".encode()).hexdigest()
    assert text_hash("a b") != text_hash("a  b")
    assert len(text_hash("\ud800")) == 64  # a lone surrogate does not fail the batch


# ----------------------------------------------------------------- passages


async def test_second_call_embeds_nothing_and_counts(engine: MemoryEngine) -> None:
    fake = FakeEmbedder()
    cache = CachedEmbedder(fake, engine.store.vectors)
    first = await cache.embed_passages(["alpha", "beta", "gamma"], now=T0)
    assert first.shape == (3, 8) and first.dtype == np.float32
    assert fake.passage_calls == [["alpha", "beta", "gamma"]]
    assert (cache.hits, cache.misses) == (0, 3)

    second = await cache.embed_passages(["alpha", "beta", "gamma"], now=T0)
    assert fake.passage_calls == [["alpha", "beta", "gamma"]]  # no new call
    assert (cache.hits, cache.misses) == (3, 3)
    np.testing.assert_array_equal(first, second)
    assert await cache.stats() == {"fake:m|passage": 3}
    assert {r[2] for r in _rows(engine)} == {8} and {r[3] for r in _rows(engine)} == {32}


async def test_duplicates_in_one_call_are_embedded_once(engine: MemoryEngine) -> None:
    fake = FakeEmbedder()
    cache = CachedEmbedder(fake, engine.store.vectors)
    out = await cache.embed_passages(["a", "b", "a", "a"])
    assert fake.passage_calls == [["a", "b"]]
    assert cache.misses == 2
    np.testing.assert_array_equal(out[0], out[2])
    np.testing.assert_array_equal(out[0], out[3])
    assert len(_rows(engine)) == 2


async def test_order_preserved_across_hits_and_misses(engine: MemoryEngine) -> None:
    fake = FakeEmbedder()
    cache = CachedEmbedder(fake, engine.store.vectors)
    await cache.embed_passages(["b", "d"])
    texts = ["a", "b", "c", "d", "b"]
    out = await cache.embed_passages(texts)
    assert fake.passage_calls[-1] == ["a", "c"]
    for row, text in zip(out, texts, strict=True):
        np.testing.assert_allclose(row, fake.vector(text))


async def test_empty_input(engine: MemoryEngine) -> None:
    fake = FakeEmbedder()
    cache = CachedEmbedder(fake, engine.store.vectors)
    assert (await cache.embed_passages([])).shape == (0, 8)
    assert fake.passage_calls == []
    with pytest.raises(TypeError):
        await cache.embed_passages("not a list")
    with pytest.raises(TypeError):
        await cache.embed_queries("not a list")


async def test_many_keys_are_looked_up_in_chunks(engine: MemoryEngine) -> None:
    fake = FakeEmbedder(dim=4)
    cache = CachedEmbedder(fake, engine.store.vectors)
    texts = [f"text {i}" for i in range(1234)]
    first = await cache.embed_passages(texts)
    assert len(fake.passage_calls) == 1
    second = await cache.embed_passages(list(reversed(texts)))
    assert len(fake.passage_calls) == 1 and cache.hits == 1234
    np.testing.assert_array_equal(second, first[::-1])


async def test_model_key_change_misses_and_never_mixes(engine: MemoryEngine) -> None:
    old = FakeEmbedder("fake:old")
    await CachedEmbedder(old, engine.store.vectors).embed_passages(["x", "y"])
    new = FakeEmbedder("fake:new")
    cache = CachedEmbedder(new, engine.store.vectors)
    out = await cache.embed_passages(["x", "y"])
    assert new.passage_calls == [["x", "y"]] and cache.misses == 2 and cache.hits == 0
    np.testing.assert_allclose(out[0], new.vector("x"))
    assert not np.allclose(out[0], old.vector("x"))
    assert await cache.stats() == {"fake:new|passage": 2, "fake:old|passage": 2}


async def test_dimension_change_under_same_key_re_embeds_and_overwrites(engine: MemoryEngine) -> None:
    await CachedEmbedder(FakeEmbedder(dim=8), engine.store.vectors).embed_passages(["x", "y"])
    fake = FakeEmbedder(dim=4)  # same model_key, another dimension: old rows are stale
    cache = CachedEmbedder(fake, engine.store.vectors)
    out = await cache.embed_passages(["x", "y"])
    assert out.shape == (2, 4)
    assert fake.passage_calls == [["x", "y"]] and (cache.hits, cache.misses) == (0, 2)
    assert {(r[2], r[3]) for r in _rows(engine)} == {(4, 16)}  # overwritten, not duplicated
    await cache.embed_passages(["x", "y"])
    assert len(fake.passage_calls) == 1 and cache.hits == 2


async def test_unknown_dimension_is_learned_and_stale_rows_replaced(engine: MemoryEngine) -> None:
    await CachedEmbedder(FakeEmbedder(dim=8), engine.store.vectors).embed_passages(["x"])
    fake = FakeEmbedder(dim=None, out_dim=4)
    cache = CachedEmbedder(fake, engine.store.vectors)
    assert cache.dim is None
    out = await cache.embed_passages(["x", "new"])
    assert out.shape == (2, 4) and cache.dim == 4
    # "new" told the dimension; the 8-dim row for "x" was then re-embedded (the one case of a second call)
    assert fake.passage_calls == [["new"], ["x"]]
    assert {(r[2], r[3]) for r in _rows(engine)} == {(4, 16)}


async def test_corrupted_blob_is_re_embedded(engine: MemoryEngine) -> None:
    fake = FakeEmbedder()
    cache = CachedEmbedder(fake, engine.store.vectors)
    await cache.embed_passages(["ok", "broken"])
    await engine.store.db.write(
        "UPDATE embedding_cache SET vector = substr(vector, 1, 10) WHERE text_hash = ?",
        (text_hash("broken"),),
    )
    out = await cache.embed_passages(["ok", "broken"])
    assert fake.passage_calls[-1] == ["broken"] and (cache.hits, cache.misses) == (1, 3)
    np.testing.assert_allclose(out[1], fake.vector("broken"))
    assert {r[3] for r in _rows(engine)} == {32}


async def test_inner_error_propagates_and_writes_nothing(engine: MemoryEngine) -> None:
    fake = FakeEmbedder()
    fake.fail = True
    cache = CachedEmbedder(fake, engine.store.vectors)
    with pytest.raises(EmbeddingError):
        await cache.embed_passages(["a", "b"])
    assert _rows(engine) == [] and (cache.hits, cache.misses) == (0, 0)
    with pytest.raises(EmbeddingError):
        await cache.embed_query("q")


async def test_wrong_shape_from_inner_is_an_embedding_error(engine: MemoryEngine) -> None:
    embedding = pytest.importorskip("memory.vectors.embedding")
    fake = FakeEmbedder(dim=8, out_dim=4)  # announces 8, returns 4
    cache = CachedEmbedder(fake, engine.store.vectors)
    with pytest.raises(embedding.EmbeddingError):
        await cache.embed_passages(["a"])
    assert _rows(engine) == []


async def test_cache_write_failure_still_returns_vectors(
    engine: MemoryEngine, caplog: pytest.LogCaptureFixture
) -> None:
    await engine.store.db.write(
        "CREATE TRIGGER no_cache BEFORE INSERT ON embedding_cache BEGIN SELECT RAISE(ABORT, 'disk full'); END"
    )
    fake = FakeEmbedder()
    cache = CachedEmbedder(fake, engine.store.vectors)
    with caplog.at_level(logging.WARNING, logger="tierclaw.memory"):
        out = await cache.embed_passages(["secret text"])
    np.testing.assert_allclose(out[0], fake.vector("secret text"))
    assert "[memory] embedding cache write failed" in caplog.text
    assert "secret text" not in caplog.text
    assert _rows(engine) == []
    await engine.store.db.write("INSERT INTO job_runs (job, last_run) VALUES ('x', 'y')")  # lock released


async def test_unreadable_cache_is_bypassed(engine: MemoryEngine, caplog: pytest.LogCaptureFixture) -> None:
    await engine.store.db.write("DROP TABLE embedding_cache")
    fake = FakeEmbedder()
    cache = CachedEmbedder(fake, engine.store.vectors)
    with caplog.at_level(logging.WARNING, logger="tierclaw.memory"):
        out = await cache.embed_passages(["a", "b"])
    assert out.shape == (2, 8) and fake.passage_calls == [["a", "b"]]
    assert "unreadable" in caplog.text and "write failed" in caplog.text


async def test_persists_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    async with await MemoryEngine.open(path) as first_engine:
        first = await CachedEmbedder(FakeEmbedder(), first_engine.store.vectors).embed_passages(
            ["kept", "also kept"]
        )
    async with await MemoryEngine.open(path) as engine:
        fake = FakeEmbedder()
        cache = CachedEmbedder(fake, engine.store.vectors)
        again = await cache.embed_passages(["kept", "also kept"])
    assert fake.passage_calls == [] and cache.hits == 2
    np.testing.assert_array_equal(first, again)


# ----------------------------------------------------------------- last_used and eviction


async def test_hits_refresh_last_used_at_most_daily(engine: MemoryEngine) -> None:
    cache = CachedEmbedder(FakeEmbedder(), engine.store.vectors)
    await cache.embed_passages(["a"], now=T0)
    assert _rows(engine)[0][4] == "2026-03-01 12:00:00"
    await cache.embed_passages(["a"], now=T0 + timedelta(hours=20))
    assert _rows(engine)[0][4] == "2026-03-01 12:00:00"  # fresh enough: no write
    await cache.embed_passages(["a"], now=T0 + timedelta(days=3))
    assert _rows(engine)[0][4] == "2026-03-04 12:00:00"


async def test_evict_by_age(engine: MemoryEngine) -> None:
    cache = CachedEmbedder(FakeEmbedder(), engine.store.vectors)
    await cache.embed_passages(["old", "used again"], now=T0)
    await cache.embed_passages(["new"], now=T0 + timedelta(days=40))
    await cache.embed_passages(["used again"], now=T0 + timedelta(days=41))
    assert await cache.evict(timedelta(days=30), now=T0 + timedelta(days=20)) == 0
    assert await cache.evict(timedelta(days=30), now=T0 + timedelta(days=45)) == 1
    assert {r[0] for r in _rows(engine)} == {text_hash("new"), text_hash("used again")}
    assert await cache.evict(timedelta(days=1), now=T0 + timedelta(days=100)) == 2
    assert await cache.stats() == {}


# ----------------------------------------------------------------- queries


async def test_query_lru_hits_and_bound(engine: MemoryEngine) -> None:
    fake = FakeEmbedder()
    cache = CachedEmbedder(fake, engine.store.vectors, query_cache_size=2)
    q1 = await cache.embed_query("one")
    assert q1.shape == (8,) and q1.dtype == np.float32
    np.testing.assert_allclose(q1, fake.vector("one", "query"))
    np.testing.assert_array_equal(await cache.embed_query("one"), q1)
    assert fake.query_calls == [["one"]] and (cache.query_hits, cache.query_misses) == (1, 1)

    q1[:] = 0  # a caller modifying its vector does not poison the cache
    np.testing.assert_allclose(await cache.embed_query("one"), fake.vector("one", "query"))

    await cache.embed_query("two")
    await cache.embed_query("one")  # most recent again
    await cache.embed_query("three")  # evicts "two", the least recently used
    calls = len(fake.query_calls)
    await cache.embed_query("one")
    assert len(fake.query_calls) == calls
    await cache.embed_query("two")
    assert fake.query_calls[-1] == ["two"]
    assert _rows(engine) == []  # queries never touch SQLite
    assert fake.passage_calls == []


async def test_query_and_passage_vectors_never_mix(engine: MemoryEngine) -> None:
    fake = FakeEmbedder()
    cache = CachedEmbedder(fake, engine.store.vectors)
    passage = (await cache.embed_passages(["same text"]))[0]
    query = await cache.embed_query("same text")
    assert fake.query_calls == [["same text"]]
    assert not np.allclose(passage, query)


async def test_query_lru_keyed_by_model(engine: MemoryEngine) -> None:
    fake = FakeEmbedder("fake:a")
    cache = CachedEmbedder(fake, engine.store.vectors)
    await cache.embed_query("q")
    fake.model_key = "fake:b"
    await cache.embed_query("q")
    assert fake.query_calls == [["q"], ["q"]]


async def test_embed_queries_batches_misses(engine: MemoryEngine) -> None:
    fake = FakeEmbedder()
    cache = CachedEmbedder(fake, engine.store.vectors)
    await cache.embed_query("a")
    out = await cache.embed_queries(["b", "a", "c", "b"])
    assert fake.query_calls[-1] == ["b", "c"]
    for row, text in zip(out, ["b", "a", "c", "b"], strict=True):
        np.testing.assert_allclose(row, fake.vector(text, "query"))


async def test_pass_through_and_close(engine: MemoryEngine) -> None:
    fake = FakeEmbedder("fake:k", dim=8)
    cache = CachedEmbedder(fake, engine.store.vectors)
    assert (cache.model_key, cache.dim) == ("fake:k", 8)
    await cache.close()
    assert fake.closed
    assert await engine.store.db.read("SELECT 1") == [(1,)]  # the shared engine stays open


async def test_learned_dimension_change_does_not_mix_shapes(engine: MemoryEngine) -> None:
    fake = FakeEmbedder(dim=None, out_dim=8)
    cache = CachedEmbedder(fake, engine.store.vectors)
    await cache.embed_passages(["x"])
    assert cache.dim == 8
    fake.out_dim = 4  # the endpoint changed its dimension under the same key
    out = await cache.embed_passages(["x", "new"])
    assert out.shape == (2, 4) and cache.dim == 4
    assert fake.passage_calls[1:] == [["new"], ["x"]]
    assert {(r[2], r[3]) for r in _rows(engine)} == {(4, 16)}

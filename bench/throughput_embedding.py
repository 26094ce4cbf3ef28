"""The embedder of the throughput benchmark: which one (--embedding), a timing wrapper for query
embeddings, and waiting until the model and the backfill are ready before the clock starts."""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gateway.app import Runtime
from memory.vectors.cache import CachedEmbedder, build_cached_embedder

# --embedding openai without --embedding-base-url: the stub's /v1/embeddings, sized like OpenAI's
# text-embedding-3-small so vectors and response bodies are as large as a real API's (answered at once).
# Its own model name, so a --vector-cache of the stub's fake vectors never passes for a real model's.
STUB_EMBEDDING_MODEL = "bench-stub-embedding"


STUB_EMBEDDING_DIM = 1536


READY_TIMEOUT_S = 900.0  # longest wait for the model warm-up and the backfill before the clock starts


@dataclass(frozen=True, slots=True)
class Embedding:
    """What ``--embedding`` and its options ask for (``none``: keyword search only)."""

    provider: str = "none"
    model: str = ""
    base_url: str | None = None  # openai: None = the stub's /v1/embeddings
    dimensions: int | None = None
    query_cache: bool = False  # keep the product's in-process query LRU (see the module docstring)
    vector_cache: Path | None = None

    def config(self, stub_url: str) -> dict[str, Any]:
        """The config file's ``memory.embedding`` section (the API key never goes into the file)."""
        if self.provider != "openai":
            return {"provider": self.provider}
        on_stub = self.base_url is None
        raw: dict[str, Any] = {
            "provider": "openai",
            "model": self.model or STUB_EMBEDDING_MODEL,
            "baseUrl": stub_url if on_stub else self.base_url,
        }
        dimensions = (
            self.dimensions if self.dimensions is not None else STUB_EMBEDDING_DIM if on_stub else None
        )
        if dimensions is not None:
            raw["dimensions"] = dimensions
        if on_stub:
            raw["apiKey"] = "sk-bench-00000000"
        return raw

    def env(self) -> dict[str, str]:
        """Environment overrides for ``load_config``: a real endpoint's key, from ``OPENAI_API_KEY``."""
        key = os.environ.get("OPENAI_API_KEY", "")
        if self.provider == "openai" and self.base_url is not None and key:
            return {"TIERCLAW_EMBEDDING_API_KEY": key}
        return {}

    def to_json(self) -> str:
        """For the startup probe's command line (it only needs the config part)."""
        return json.dumps(
            {
                "provider": self.provider,
                "model": self.model,
                "base_url": self.base_url,
                "dimensions": self.dimensions,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> Embedding:
        return cls(**json.loads(text))


class TimedEmbedder:
    """The engine's embedder with every query embedding timed where the engine calls it.

    A thin pass-through (one coroutine frame more), so retrieval is the real one. ``query_ms`` holds the
    calls that returned a vector, ``failed`` those that raised or were cancelled by the engine's query
    timeout (that retrieval went keyword-only, which would flatter the numbers); ``passage_calls`` counts
    passage embeddings (the write path and the backfill: there must be none in the timed window).
    Anything else (``evict``, ``stats``, counters) goes to the wrapped ``CachedEmbedder``.
    """

    def __init__(self, inner: CachedEmbedder) -> None:
        self.inner = inner
        self.query_ms: list[float] = []
        self.failed = 0
        self.passage_calls = 0

    @property
    def model_key(self) -> str:
        return self.inner.model_key

    @property
    def dim(self) -> int | None:
        return self.inner.dim

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def embed_passages(self, texts: Any, **kwargs: Any) -> np.ndarray:
        self.passage_calls += 1
        return await self.inner.embed_passages(texts, **kwargs)

    async def embed_queries(self, texts: Any) -> np.ndarray:
        return await self.inner.embed_queries(texts)

    async def embed_query(self, text: str) -> np.ndarray:
        started = time.perf_counter()
        try:
            vector = await self.inner.embed_query(text)
        except BaseException:
            self.failed += 1
            raise
        self.query_ms.append((time.perf_counter() - started) * 1000.0)
        return vector

    async def close(self) -> None:
        await self.inner.close()


async def time_embedder(runtime: Runtime, config: Any, *, query_cache: bool) -> TimedEmbedder:
    """Put a ``TimedEmbedder`` in front of the engine's embedder (before ``start``, so the warm-up and the
    backfill use it too). Without ``query_cache`` the runtime's ``CachedEmbedder`` is replaced by the same
    one built with ``query_cache_size=0`` (the passage cache is unchanged)."""
    engine = runtime.engine
    cached = engine.embedder
    assert isinstance(cached, CachedEmbedder), cached
    if not query_cache:
        await cached.close()  # nothing was loaded or contacted yet
        cached = build_cached_embedder(
            config.memory.embedding.settings(), engine.store.vectors, query_cache_size=0
        )
        assert cached is not None
    timer = TimedEmbedder(cached)
    engine.embedder = timer
    return timer


async def wait_until_embedder_ready(runtime: Runtime, timeout: float = READY_TIMEOUT_S) -> float:
    """Wait for the runtime's model warm-up and for its backfill to have nothing left; seconds waited.

    ``Runtime.start`` keeps its warm-up task in ``_warm_up`` (there is no public handle), awaited here so
    no model load lands in the timed window; then the backfill must have finished a pass and no live memory
    may lack a vector of the model. Raises if the warm-up failed (the run would be keyword-only) or the
    backfill keeps failing.
    """
    started = time.perf_counter()
    engine = runtime.engine
    assert engine.embedder is not None
    warm = getattr(runtime, "_warm_up", None)
    ok = await asyncio.wait_for(warm if warm is not None else engine.warm_up_embedder(), timeout)
    if not ok:
        raise RuntimeError(f"the embedder {engine.embedder.model_key} did not warm up (see the log)")
    backfill = runtime.backfill
    while True:
        if backfill is not None and backfill.failures:
            raise RuntimeError(f"the embedding backfill is failing ({backfill.failures} attempts)")
        missing = await engine.vectors.count_missing_embeddings(engine.embedder.model_key)
        if missing == 0 and (backfill is None or backfill.passes >= 1):
            return time.perf_counter() - started
        if time.perf_counter() - started > timeout:
            raise RuntimeError(f"{missing} memories still lack a vector after {timeout:.0f} s")
        await asyncio.sleep(0.05)

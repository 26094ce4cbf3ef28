"""A persistent cache of passage embeddings, and an in-process LRU for query embeddings.

Embedding a passage costs milliseconds on a local model and money on an API, and the same texts (memories,
benchmark corpora) are embedded again on every run and after every restart. ``CachedEmbedder`` wraps an
``Embedder`` and keeps passage vectors in the ``embedding_cache`` table (schema v4), keyed by the SHA-256 of
the exact text and the model key. The dimension is stored with every row and checked on every read, so a
model key that was reused for another dimension, or a truncated blob, can never hand back a wrong-shaped
vector: such rows are treated as misses, re-embedded and overwritten.

Queries are on the reply path, where a database round trip is the dominant cost (bench/gateway_throughput.py),
so they only go through a small in-process LRU.

The on-disk vector format (little-endian float32, no header: the dimension lives in its own column) is
defined once, by ``vector_index.vector_to_blob`` / ``blob_to_vector``, which the engine already uses for
memory vectors; they are re-exported here so a cached vector and a memory vector can never drift apart.
"""

from __future__ import annotations

import hashlib
import logging
from collections import OrderedDict
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import numpy as np

from memory.clock import to_db, utcnow
from memory.vectors.index import blob_to_vector, vector_to_blob
from memory.vectors.usage import LatentTerms

if TYPE_CHECKING:
    from memory.store.protocol import VectorRowsAPI
    from memory.vectors.embedding import Embedder, EmbeddingSettings


__all__ = ["CachedEmbedder", "blob_to_vector", "build_cached_embedder", "text_hash", "vector_to_blob"]

log = logging.getLogger("tierclaw.memory")

# A hit's last_used is rewritten only when it is older than this. Eviction works in weeks, so a day of
# imprecision costs nothing, while rewriting on every hit would turn each cached read into a write
# transaction that takes the engine's write lock (competing with memory writes) and grows the WAL.
TOUCH_INTERVAL = timedelta(days=1)
# Default number of query vectors kept in process (384 float32 ≈ 1.5 KB each, so ~3 MB).
QUERY_CACHE_SIZE = 2048
# Suffix of the cache's model column for passages: E5-style models embed queries and passages differently,
# so a passage vector must never be served for a query (or the reverse) even if both were ever persisted.
PASSAGE_SUFFIX = "|passage"


def text_hash(text: str) -> str:
    """The cache key of a text: SHA-256 hex of its exact UTF-8 bytes (no normalisation: the model sees
    the text exactly, so two texts differing in one space may embed differently).

    ``surrogatepass`` keeps a lone surrogate (seen in text decoded from broken clients) hashable instead of
    failing the whole batch; the mapping stays one-to-one.
    """
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _text_list(texts: Sequence[str]) -> list[str]:
    """``texts`` as a list; a bare string is refused (it would be embedded character by character)."""
    if isinstance(texts, str | bytes):
        raise TypeError("embed a list of texts, not a single string")
    return list(texts)


def _embedding_error(message: str) -> Exception:
    """An ``EmbeddingError``, imported only when one is raised: ``memory.embedding`` pulls in the openai
    client, which the cache never needs, and a lazy import leaves ``memory.embedding`` free to build a
    ``CachedEmbedder`` without an import cycle."""
    from memory.vectors.embedding import EmbeddingError

    return EmbeddingError(message)


class CachedEmbedder:
    """An ``Embedder`` with a persistent passage cache (in the memory database) and an in-process query LRU.

    It satisfies the ``Embedder`` protocol itself, so it can be used wherever the inner one would be.
    ``rows`` are the store's ``vectors`` (``memory/store/vectors.py``), handed over where the runtime is
    wired; the database is not closed by ``close()``, the inner embedder is.

    Counters for benchmarks, per distinct text within a call: ``hits`` / ``misses`` for passages (a stale
    row counts as a miss), ``query_hits`` / ``query_misses`` for the LRU.
    """

    def __init__(
        self, inner: Embedder, rows: VectorRowsAPI, *, query_cache_size: int = QUERY_CACHE_SIZE
    ) -> None:
        self._inner = inner
        self._rows = rows  # the store's ``vectors``
        self._query_cache_size = max(0, query_cache_size)
        self._queries: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._learned_dim: int | None = None
        self.hits = 0
        self.misses = 0
        self.query_hits = 0
        self.query_misses = 0

    # ----------------------------------------------------------------- protocol pass-through

    @property
    def model_key(self) -> str:
        """The inner embedder's key (read each time: it identifies model and dimension)."""
        return self._inner.model_key

    @property
    def uses_local_cores(self) -> bool:
        """Whether the inner embedder computes on this machine's CPU (see ``Embedder``)."""
        return self._inner.uses_local_cores

    @property
    def dim(self) -> int | None:
        """The inner embedder's dimension, or the one seen in its output if it did not say."""
        inner_dim = self._inner.dim
        return inner_dim if inner_dim is not None else self._learned_dim

    async def close(self) -> None:
        """Close the inner embedder and drop the query LRU (the engine belongs to the caller)."""
        self._queries.clear()
        await self._inner.close()

    async def latent_terms(self, texts: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        """The inner embedder's latent terms of ``texts`` (``usage.LatentTerms``), not cached: only
        extraction reads them, once per message; ``EmbeddingError`` when the inner embedder has none."""
        if not isinstance(self._inner, LatentTerms):
            raise _embedding_error(f"embedder {self.model_key} gives no latent terms")
        return await self._inner.latent_terms(texts)

    # ----------------------------------------------------------------- passages (persistent)

    async def embed_passages(self, texts: Sequence[str], *, now: datetime | None = None) -> np.ndarray:
        """Vectors for ``texts`` as an (n, dim) float32 array in input order, from the cache where valid.

        Distinct missing texts go to the inner embedder in one call and are stored in one transaction.
        An ``EmbeddingError`` from the inner embedder propagates (nothing is written); a cache that cannot
        be read or written is logged and bypassed, never costing the caller its vectors. ``now`` (default:
        the current time) is what ``last_used`` is compared with and set to.
        """
        moment = now or utcnow()
        texts = _text_list(texts)
        if not texts:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        model = self.model_key + PASSAGE_SUFFIX
        keys = [text_hash(t) for t in texts]
        unique: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            unique.setdefault(key, text)

        expected = self.dim
        cached, last_used = _usable_rows(await self._lookup(model, list(unique)), expected)
        fresh: dict[str, np.ndarray] = {}
        missing = [k for k in unique if k not in cached]
        if missing:
            fresh.update(await self._embed_passages([unique[k] for k in missing], missing))
        current = self.dim
        if cached and current is not None and current != expected:
            # The dimension was unknown (or has changed) when the rows were checked; the fresh vectors now
            # tell it, and rows of another dimension are re-embedded. That is a second inner call, but only
            # on the first call of a process whose inner embedder does not announce its dimension, and only
            # when bad rows exist. (With no misses at all there is nothing to learn from: rows that agree
            # with each other are served; ``model_key`` is meant to name the dimension anyway.)
            stale = [k for k, v in cached.items() if v.shape[0] != current]
            for key in stale:
                del cached[key]
            if stale:
                fresh.update(await self._embed_passages([unique[k] for k in stale], stale))
        self.hits += len(cached)
        self.misses += len(fresh)
        await self._keep(model, texts, cached, last_used, fresh, moment)
        found = cached | fresh
        dim = next(iter(found.values())).shape[0]
        out = np.empty((len(texts), dim), dtype=np.float32)
        for i, key in enumerate(keys):
            out[i] = found[key]
        return out

    async def _keep(
        self,
        model: str,
        texts: list[str],
        cached: dict[str, np.ndarray],
        last_used: dict[str, str],
        fresh: dict[str, np.ndarray],
        moment: datetime,
    ) -> None:
        """Store the fresh vectors and touch the cached rows not used for ``TOUCH_INTERVAL``."""
        cutoff = to_db(moment - TOUCH_INTERVAL)
        touch = [k for k in cached if last_used[k] < cutoff]
        await self._store(model, fresh, touch, to_db(moment))
        log.debug(
            "[memory] embedding cache model=%s texts=%d hits=%d misses=%d touched=%d",
            model,
            len(texts),
            len(cached),
            len(fresh),
            len(touch),
        )

    async def _lookup(self, model: str, keys: list[str]) -> list[tuple[str, int, bytes, str]]:
        """Cached rows (text_hash, dim, vector, last_used) for ``keys``, one query per chunk."""
        try:
            return await self._rows.cached(model, keys)
        except Exception as exc:  # a cache must not fail the caller: embed everything instead
            log.warning("[memory] embedding cache unreadable, embedding without it: %s", exc)
            return []

    async def _store(self, model: str, fresh: dict[str, np.ndarray], touch: list[str], stamp: str) -> None:
        """Write new vectors (replacing stale rows) and refresh ``last_used`` of old hits, in one transaction.

        Failures are logged, not raised: the caller already has its vectors, and losing a cache write only
        costs a re-embedding later.
        """
        if not fresh and not touch:
            return
        try:
            rows = [(k, int(v.shape[0]), vector_to_blob(v)) for k, v in fresh.items()]
            await self._rows.cache(model, rows, touch, stamp)
        except Exception as exc:
            log.warning(
                "[memory] embedding cache write failed (%d new, %d touched), vectors still returned: %s",
                len(fresh),
                len(touch),
                exc,
            )

    async def _embed_passages(self, texts: list[str], keys: list[str]) -> dict[str, np.ndarray]:
        result = self._checked(await self._inner.embed_passages(texts), len(texts))
        return {key: result[i] for i, key in enumerate(keys)}

    # ----------------------------------------------------------------- queries (in process)

    async def embed_query(self, text: str) -> np.ndarray:
        """One query vector (dim,) float32: from the in-process LRU, else from the inner embedder."""
        return (await self.embed_queries([text]))[0]

    async def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Query vectors (n, dim) float32 in input order; LRU misses go to the inner embedder in one call."""
        texts = _text_list(texts)
        if not texts:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        model = self.model_key
        expected = self.dim
        found: dict[str, np.ndarray] = {}
        for text in texts:
            if text in found:
                continue
            vec = self._queries.get((model, text))
            if vec is not None and (expected is None or vec.shape[0] == expected):
                self._queries.move_to_end((model, text))
                found[text] = vec
        self.query_hits += len(found)
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            result = self._checked(await self._inner.embed_queries(missing), len(missing))
            self.query_misses += len(missing)
            for i, text in enumerate(missing):
                vec = result[i].copy()
                vec.flags.writeable = False  # shared by later hits: the copies below are what callers get
                found[text] = vec
                if self._query_cache_size:
                    self._queries[(model, text)] = vec
                    self._queries.move_to_end((model, text))
            while len(self._queries) > self._query_cache_size:
                self._queries.popitem(last=False)
        return np.stack([found[t] for t in texts]).astype(np.float32, copy=False)

    # ----------------------------------------------------------------- shared

    def _checked(self, result: np.ndarray, n: int) -> np.ndarray:
        """The inner embedder's output as float32 (n, d), after checking its shape and learning ``d``.

        A wrong shape or a dimension other than the one announced is the inner embedder's failure and is
        raised as ``EmbeddingError``, so callers take their usual fallback instead of storing bad rows.
        """
        arr = np.asarray(result, dtype=np.float32)
        if arr.ndim != 2 or arr.shape[0] != n or arr.shape[1] == 0:
            raise _embedding_error(f"embedder {self.model_key} returned shape {arr.shape} for {n} texts")
        dim = int(arr.shape[1])
        announced = self._inner.dim
        if announced is not None and dim != announced:
            raise _embedding_error(f"embedder {self.model_key} announced dim {announced} but returned {dim}")
        if announced is None and self._learned_dim != dim:
            if self._learned_dim is not None:
                log.warning(
                    "[memory] embedder %s changed dimension %d -> %d under the same key",
                    self.model_key,
                    self._learned_dim,
                    dim,
                )
            self._learned_dim = dim
        return arr

    # ----------------------------------------------------------------- maintenance

    async def evict(self, unused_for: timedelta, now: datetime | None = None) -> int:
        """Delete cached vectors not used for ``unused_for`` (all models); returns how many went.

        ``last_used`` is refreshed at most once per ``TOUCH_INTERVAL``, so ``unused_for`` should be well
        above a day.
        """
        cutoff = to_db((now or utcnow()) - unused_for)
        removed = await self._rows.evict_cached(cutoff)
        if removed:
            log.info("[memory] embedding cache evicted %d rows unused since %s", removed, cutoff)
        return removed

    async def stats(self) -> dict[str, int]:
        """Cached rows per model column (``<model_key>|passage``), for ``tierclaw status`` and benchmarks."""
        return await self._rows.cache_counts()


def build_cached_embedder(
    settings: EmbeddingSettings, rows: VectorRowsAPI, *, query_cache_size: int = QUERY_CACHE_SIZE
) -> CachedEmbedder | None:
    """The one way to build the configured embedder behind the content-hash cache (None: provider "none").

    Nothing is loaded or contacted here: the local model loads on first use, off the event loop. Raises
    ValueError on settings ``build_embedder`` refuses. ``embedding.build_embedder`` is looked up at call
    time, so a test can substitute a backend on that module.
    """
    from memory.vectors import embedding

    inner = embedding.build_embedder(settings)
    return CachedEmbedder(inner, rows, query_cache_size=query_cache_size) if inner is not None else None


def _usable_rows(rows: list[tuple], expected: int | None) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The cached rows that can be served, as (text hash -> vector, text hash -> last_used): rows of
    another dimension than ``expected`` and corrupt rows are left out (the caller embeds them again)."""
    cached: dict[str, np.ndarray] = {}
    last_used: dict[str, str] = {}
    for key, dim, blob, used in rows:
        if expected is not None and dim != expected:
            continue  # made at another dimension under the same key: stale, overwritten below
        vector = blob_to_vector(blob, dim) if isinstance(blob, bytes) and isinstance(dim, int) else None
        if vector is None:
            continue  # length is not 4 * dim (truncated, foreign): corrupt, overwritten below
        cached[key] = vector  # a read-only view of the row's bytes; only copied into the result
        last_used[key] = used
    if expected is None and len({v.shape[0] for v in cached.values()}) > 1:
        cached.clear()  # dimension unknown and the rows disagree: none can be trusted
    return cached, last_used

"""How memory uses an embedder: never let it fail a write or a reply, and never flood the log.

A write whose vectors cannot be computed is stored without them (the backfill fills them in later); a
query whose vector fails or is slower than ``query_timeout`` is answered keyword-only. Only the first
failure of a streak is logged as a warning, and the recovery once (docs/architecture.md, "Embeddings").
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from memory.text.tokenizer import MAX_QUERY_CHARS

log = logging.getLogger("tierclaw.memory")

QUERY_EMBED_TIMEOUT_SECONDS = 1.0
WARM_UP_TIMEOUT_SECONDS = 60.0  # a cold start reads the model file from disk


class MemoryEmbedder(Protocol):
    """What memory needs of an embedder (``memory/vectors/cache.CachedEmbedder`` is the one in use).

    ``model_key`` names model and dimension: stored vectors of another key are never compared.
    ``uses_local_cores``: embedding competes with the database and Python for this machine's cores, so
    retrieval embeds the query before its database work instead of beside it.
    """

    @property
    def model_key(self) -> str: ...

    @property
    def uses_local_cores(self) -> bool: ...

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    async def embed_query(self, text: str) -> np.ndarray: ...

    async def close(self) -> None: ...


@runtime_checkable
class LatentTerms(Protocol):
    """An embedder that also gives each text's sparse latent terms (``LocalEmbedder``, ``CachedEmbedder``):
    what the learned head's keep score reads beside the vectors (``memory/head/latent_terms.py``)."""

    async def latent_terms(self, texts: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]: ...


# How many recent query vectors ``EmbeddingUse.query`` keeps (the chats being answered at once).
RECENT_QUERIES = 16


class EmbeddingUse:
    """The engine's embedder (None: keyword search only) with the failure policy above."""

    def __init__(self) -> None:
        self.embedder: MemoryEmbedder | None = None
        self.query_timeout = QUERY_EMBED_TIMEOUT_SECONDS
        self._failing = False
        # The last few query vectors: the gate's head and then retrieval ask for the same text back to
        # back (issue 35), whether or not the embedder keeps a query cache of its own.
        self._recent: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()

    async def passages(self, texts: list[str]) -> np.ndarray | None:
        """Vectors for texts about to be written, or None (no embedder, or it failed: backfill later)."""
        embedder = self.embedder
        if embedder is None or not texts:
            return None
        try:
            vectors = await embedder.embed_passages(texts)
        except Exception as exc:  # EmbeddingError, or anything else: a write must not fail for a vector
            self._failed("embedding new memories", exc)
            return None
        self._recovered()
        return vectors

    def recent(self, text: str) -> np.ndarray | None:
        """The query's vector when one of the last few queries had it (what ``query`` would return at
        once), else None: retrieval takes the vector the gate's head just asked for without a task and an
        event-loop round trip for it (bench/README.md, "Gateway CPU", stop 52)."""
        embedder = self.embedder
        text = text[:MAX_QUERY_CHARS].strip()
        if embedder is None or not text:
            return None
        key = (embedder.model_key, text)
        vector = self._recent.get(key)
        if vector is not None:
            self._recent.move_to_end(key)
        return vector

    async def query(self, text: str, timeout: float | None = None) -> np.ndarray | None:
        """The query's vector, or None (no embedder, empty text, or it failed / was too slow)."""
        embedder = self.embedder
        text = text[:MAX_QUERY_CHARS].strip()
        if embedder is None or not text:
            return None
        key = (embedder.model_key, text)
        if (known := self.recent(text)) is not None:
            return known
        try:
            # asyncio.timeout, not wait_for: wait_for (3.11) can swallow the reply task's own cancel.
            async with asyncio.timeout(timeout or self.query_timeout):
                vector = await embedder.embed_query(text)
        except Exception as exc:  # EmbeddingError, TimeoutError, anything: retrieval must still answer
            self._failed("embedding a query", exc)
            return None
        self._recovered()
        self._recent[key] = vector
        while len(self._recent) > RECENT_QUERIES:
            self._recent.popitem(last=False)
        return vector

    async def warm_up(self) -> bool:
        """Load the embedding model now (at start) so the first reply does not pay for it."""
        return await self.query("warm up", timeout=WARM_UP_TIMEOUT_SECONDS) is not None

    def _failed(self, what: str, exc: BaseException) -> None:
        if not self._failing:
            log.warning(
                "[memory] %s failed (%s: %s); keyword search only, vectors are filled in later",
                what,
                type(exc).__name__,
                str(exc)[:200],
            )
        self._failing = True

    def _recovered(self) -> None:
        if self._failing:
            log.info("[memory] embeddings work again")
        self._failing = False

"""The memories' stored vectors as the embedding jobs see them (``engine.vectors``).

Its ``*_embeddings`` methods are ``reindex.VectorTarget``, as ``engine.conversation``'s are for the kept
turns: ``reindex(engine.vectors, …)`` fills memories, ``reindex(engine.conversation, …)`` turns.

What the backfill and ``tierclaw memory reindex`` (``reindex.py``) and the weekly merge
(``memory/pipeline/compression.py``) need: which live memories lack a vector of a model, storing new
vectors, and one owner's matrix. A plain object the engine holds, so that the reply path's façade
(``memory/engine.py``) stays small; ``cache`` is the RAM side (``owner_cache.py``) the engine's writer and
retriever share.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memory.store.protocol import MemoryStore
from memory.vectors.index import OwnerVectors, vector_to_blob
from memory.vectors.owner_cache import OwnerVectorCache
from memory.vectors.usage import EmbeddingUse


class StoredVectors:
    """Memory vectors in the store and in RAM; every read or write by owner or by memory id."""

    def __init__(self, store: MemoryStore, embedding: EmbeddingUse) -> None:
        self._rows = store.vectors
        self._embedding = embedding
        self.cache = OwnerVectorCache(store)  # loaded matrices within ``cache.budget_bytes``

    async def missing_embeddings(
        self, model_key: str, *, after_id: int = 0, limit: int = 256, owner: str | None = None
    ) -> list[tuple[int, str, str]]:
        """Live memories without a ``model_key`` vector: (id, owner, content) in id order after ``after_id``
        (the backfill and ``tierclaw memory reindex`` walk by id, which makes both resumable)."""
        return await self._rows.missing(model_key, after_id=after_id, limit=limit, owner=owner)

    async def count_missing_embeddings(self, model_key: str, owner: str | None = None) -> int:
        """How many live memories have no vector of ``model_key`` (what a reindex still has to do)."""
        return await self._rows.count_missing(model_key, owner)

    async def set_embeddings(self, model_key: str, items: Sequence[tuple[int, str, np.ndarray]]) -> int:
        """Store vectors for (id, the content that was embedded, vector); a row whose content changed
        since (an edit in between) is left alone for the next backfill. Returns rows updated."""
        if not items:
            return 0
        updated, owners = await self._rows.set(model_key, [(i, c, vector_to_blob(v)) for i, c, v in items])
        for owner in owners:
            self.cache.drop(owner)
        return updated

    async def of_owner(self, owner: str) -> OwnerVectors | None:
        """The owner's live memory vectors under the current embedder (None without one); for jobs that
        compare memories with each other (the weekly merge clusters by similarity)."""
        embedder = self._embedding.embedder
        return None if embedder is None else await self.cache.get(owner, embedder.model_key)

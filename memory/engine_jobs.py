"""The engine's methods for the background jobs: embedding backfill and the compression jobs.

A part of ``MemoryEngine`` (it inherits them), kept apart because only ``memory/vectors/reindex.py`` and
``memory/pipeline/compression.py`` use them — the reply path never does. Like every engine method they
delegate to the store and the vector cache, and take the owner where they touch rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date

import numpy as np

from memory.records import Event, Memory
from memory.store.protocol import MemoryStore
from memory.vectors.index import OwnerVectors, vector_to_blob
from memory.vectors.owner_cache import OwnerVectorCache
from memory.vectors.usage import EmbeddingUse


class BackgroundJobMethods:
    """Mixed into ``MemoryEngine``, which provides these attributes."""

    store: MemoryStore
    _embedding: EmbeddingUse
    _vectors: OwnerVectorCache

    # ------------------------------------------------------------ embeddings

    async def missing_embeddings(
        self, model_key: str, *, after_id: int = 0, limit: int = 256, owner: str | None = None
    ) -> list[tuple[int, str, str]]:
        """Live memories without a ``model_key`` vector: (id, owner, content) in id order after ``after_id``
        (the backfill and ``tierclaw memory reindex`` walk by id, which makes both resumable)."""
        return await self.store.vectors.missing(model_key, after_id=after_id, limit=limit, owner=owner)

    async def count_missing_embeddings(self, model_key: str, owner: str | None = None) -> int:
        """How many live memories have no vector of ``model_key`` (what a reindex still has to do)."""
        return await self.store.vectors.count_missing(model_key, owner)

    async def set_embeddings(self, model_key: str, items: Sequence[tuple[int, str, np.ndarray]]) -> int:
        """Store vectors for (id, the content that was embedded, vector); a row whose content changed
        since (an edit in between) is left alone for the next backfill. Returns rows updated."""
        if not items:
            return 0
        updated, owners = await self.store.vectors.set(
            model_key, [(i, c, vector_to_blob(v)) for i, c, v in items]
        )
        for owner in owners:
            self._vectors.drop(owner)
        return updated

    async def owner_vectors(self, owner: str) -> OwnerVectors | None:
        """The owner's live memory vectors under the current embedder (None without one); for jobs that
        compare memories with each other (the weekly merge clusters by similarity)."""
        embedder = self._embedding.embedder
        return None if embedder is None else await self._vectors.get(owner, embedder.model_key)

    async def mark_events_compressed(self, owner: str, event_ids: Sequence[int]) -> int:
        """Flag Tier 3 events as folded into Tier 2 by the daily job; returns how many changed."""
        return await self.store.events.mark_compressed(owner, event_ids) if event_ids else 0

    # ------------------------------------------------------------ for the compression jobs

    async def owners_with_uncompressed_events(self, until: date | str) -> list[str]:
        """Owners with Tier 3 events dated on or before ``until`` that the daily job has not compressed."""
        return await self.store.events.owners_with_uncompressed(day_text(until))

    async def uncompressed_events(self, owner: str, until: date | str) -> list[Event]:
        """The owner's uncompressed Tier 3 events dated on or before ``until``, oldest first."""
        return await self.store.events.uncompressed(owner, day_text(until))

    async def partitions(self, owner: str, *, tier: int = 2) -> list[tuple[str, str, int]]:
        """(project, topic, live count) of every partition of the owner's live memories in ``tier``."""
        return await self.store.memories.partitions(owner, tier)

    async def partition_memories(
        self, owner: str, project: str, topic: str, *, tier: int = 2
    ) -> list[Memory]:
        """Every live memory of one project/topic partition, most important first."""
        return await self.store.memories.live(
            owner, tier=tier, project=project, topic=topic, order="importance"
        )

    async def important_memories(
        self, owner: str, min_importance: float = 0.7, limit: int = 200, *, tier: int = 2
    ) -> list[Memory]:
        """Live memories of ``tier`` with importance >= ``min_importance``, most important first."""
        return await self.store.memories.live(
            owner, tier=tier, min_importance=min_importance, order="importance_newest", limit=limit
        )

    async def memories_by_category(
        self, owner: str, categories: Iterable[str], *, tier: int = 2
    ) -> list[Memory]:
        """Every live memory of ``tier`` in one of ``categories`` (oldest first)."""
        cats = list(dict.fromkeys(categories))
        return await self.store.memories.live(owner, tier=tier, categories=cats) if cats else []


def day_text(value: date | str) -> str:
    """A date as stored in ``daily_events.event_date`` (YYYY-MM-DD); raises ValueError when malformed."""
    day = value.isoformat() if isinstance(value, date) else value
    date.fromisoformat(day)
    return day

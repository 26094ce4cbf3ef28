"""The reads and marks only the compression jobs make (``engine.compression``; the jobs are in
``pipeline/compression.py``).

A plain object the engine holds, on the store's parts, so that the reply path's façade
(``memory/engine.py``) stays small and ``compression.py`` never reaches into the store itself. Every
call takes the owner where it touches rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date

from memory.clock import day_text
from memory.records import Event, Memory
from memory.store.protocol import MemoryStore


class CompressionRows:
    """Tier 3 events to fold, Tier 2 partitions to merge, the profile's sources, decayed candidates."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store
        self._events = store.events
        self._memories = store.memories

    async def owners_with_uncompressed_events(self, until: date | str) -> list[str]:
        """Owners with Tier 3 events dated on or before ``until`` that the daily job has not compressed."""
        return await self._events.owners_with_uncompressed(day_text(until))

    async def uncompressed_events(self, owner: str, until: date | str) -> list[Event]:
        """The owner's uncompressed Tier 3 events dated on or before ``until``, oldest first."""
        return await self._events.uncompressed(owner, day_text(until))

    async def mark_events_compressed(self, owner: str, event_ids: Sequence[int]) -> int:
        """Flag Tier 3 events as folded into Tier 2 by the daily job; returns how many changed."""
        return await self._events.mark_compressed(owner, event_ids) if event_ids else 0

    async def partitions(self, owner: str, *, tier: int = 2) -> list[tuple[str, str, int]]:
        """(project, topic, live count) of every partition of the owner's live memories in ``tier``."""
        return await self._memories.partitions(owner, tier)

    async def partition_memories(
        self, owner: str, project: str, topic: str, *, tier: int = 2
    ) -> list[Memory]:
        """Every live memory of one project/topic partition, most important first."""
        return await self._memories.live(owner, tier=tier, project=project, topic=topic, order="importance")

    async def important_memories(
        self, owner: str, min_importance: float = 0.7, limit: int = 200, *, tier: int = 2
    ) -> list[Memory]:
        """Live memories of ``tier`` with importance >= ``min_importance``, most important first."""
        return await self._memories.live(
            owner, tier=tier, min_importance=min_importance, order="importance_newest", limit=limit
        )

    async def memories_by_category(
        self, owner: str, categories: Iterable[str], *, tier: int = 2
    ) -> list[Memory]:
        """Every live memory of ``tier`` in one of ``categories`` (oldest first)."""
        cats = list(dict.fromkeys(categories))
        return await self._memories.live(owner, tier=tier, categories=cats) if cats else []

    async def carry_refs(self, targets: Sequence[int], archived: Sequence[int]) -> None:
        """Give each of ``targets`` the source references of the ``archived`` rows, in one transaction
        (refs only add, never replace)."""
        async with self._store.transaction():
            for target in targets:
                await self._memories.copy_refs(target, list(archived))

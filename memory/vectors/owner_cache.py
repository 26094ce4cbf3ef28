"""Each owner's live memory vectors in RAM, loaded on first use and kept within a memory budget.

Invariants:
- every cached matrix holds vectors of one embedding model (``model_key``); asking for another model
  drops them all;
- a matrix reflects the owner's live rows as of its load plus the rows appended since (inserts through
  this process); any other change (archive, supersede, edit, purge, backfill) drops it (``drop``);
- a change by another process (another gateway replica, ``tierclaw memory edit`` while the gateway runs)
  to an owner's memories or vectors shows in the store's change versions (``store.changes``,
  ``memory/store/changes.py``), which ``get`` reads at most twice a second: then that owner's matrix,
  and only that one, is dropped;
- all matrices together stay within ``budget_bytes``: past it the least recently searched owners are
  dropped (the owner just loaded is kept, however large) and reloaded on their next search (~35 ms per
  10k memories), so a gateway serving many people for months does not grow without bound.
"""

from __future__ import annotations

import logging
from collections import OrderedDict

import numpy as np

from memory.store.protocol import MemoryStore
from memory.vectors.index import OwnerVectors

log = logging.getLogger("tierclaw.memory")

# 1.5 KB per memory at 384 dimensions: ~170k memories in all.
VECTOR_CACHE_BYTES = 256 * 2**20


class OwnerVectorCache:
    """Loaded ``OwnerVectors`` per owner, least recently searched first."""

    def __init__(self, store: MemoryStore, budget_bytes: int = VECTOR_CACHE_BYTES) -> None:
        self._store = store
        self.budget_bytes = budget_bytes
        self._matrices: OrderedDict[str, OwnerVectors] = OrderedDict()
        self._model_key = ""
        store.changes.listen("memories", self._others_changed)
        store.changes.listen("vectors", self._others_changed)

    def _others_changed(self, owner: str | None, _rows_delta: int) -> None:
        if owner is None:
            self._matrices.clear()
        else:
            self.drop(owner)

    def owners(self) -> list[str]:
        """Owners whose matrix is loaded, least recently searched first."""
        return list(self._matrices)

    def drop(self, owner: str) -> None:
        """Forget one owner's matrix (its rows changed in a way an append does not cover)."""
        self._matrices.pop(owner, None)

    def append(self, owner: str, memory_id: int, tier: int, vector: np.ndarray) -> None:
        """Add a memory just inserted to the owner's matrix, if it is loaded."""
        matrix = self._matrices.get(owner)
        if matrix is not None:
            matrix.append(memory_id, tier, vector)

    async def drop_if_others_wrote(self) -> None:
        """Drop the matrices of the owners other processes changed, read now (not after an interval):
        the writer asks inside its transaction, before it judges a duplicate by them."""
        await self._store.changes.refresh(force=True)

    async def get(self, owner: str, model_key: str, *, check_others: bool = True) -> OwnerVectors:
        """The owner's live memory vectors of ``model_key`` (tiers 1 and 2), loaded once per change."""
        if check_others:
            await self._store.changes.refresh()
        if model_key != self._model_key:
            self._matrices.clear()
            self._model_key = model_key
        matrix = self._matrices.get(owner)
        if matrix is not None:
            self._matrices.move_to_end(owner)
            return matrix
        rows = await self._store.vectors.of_owner(owner, model_key)
        matrix = self._matrices[owner] = OwnerVectors.build(rows)
        self._evict()
        return matrix

    def _evict(self) -> None:
        total = sum(v.nbytes for v in self._matrices.values())
        while total > self.budget_bytes and len(self._matrices) > 1:
            owner, dropped = self._matrices.popitem(last=False)
            total -= dropped.nbytes
            log.debug("[memory] vectors of owner=%s dropped from RAM (%d bytes)", owner, dropped.nbytes)

"""Access times written off the reply path (issue 38, item 5): a memory recalled for a reply is marked used
(``last_accessed``, ``access_count``: the decay clock restarts) by a background task, not before the
model is asked, and the marks of the replies made meanwhile go out together — one statement per batch,
however many replies recalled memories while the previous batch was written.

A mark is a hint to decay, not a record: one lost to a kill -9 costs a memory a little freshness, never a
message or a fact. ``flush`` (at close) writes what is pending.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence

from memory.clock import to_db, utcnow
from memory.store.errors import store_was_closed
from memory.store.protocol import MemoryStore

log = logging.getLogger("tierclaw.memory")


class LaterTouches:
    """Pending access marks (memory id -> times used) and the task that writes them."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store
        self._pending: dict[int, int] = {}
        self._task: asyncio.Task[None] | None = None

    @property
    def pending(self) -> int:
        """Memories waiting for their mark."""
        return len(self._pending)

    def add(self, ids: Sequence[int]) -> None:
        """Mark ``ids`` used now, soon (in the background)."""
        for memory_id in ids:
            self._pending[memory_id] = self._pending.get(memory_id, 0) + 1
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._write(), name="memory-touches")

    async def flush(self) -> None:
        """Write what is pending now and wait for the writer (at close, and in tests)."""
        task = self._task
        if task is not None and not task.done():
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._pending:
            await self._write()

    async def _write(self) -> None:
        """Batches until nothing is pending: ids used the same number of times share one statement."""
        while self._pending:
            batch, self._pending = self._pending, {}
            by_count: dict[int, list[int]] = {}
            for memory_id, count in batch.items():
                by_count.setdefault(count, []).append(memory_id)
            now = to_db(utcnow())
            try:
                for count, ids in by_count.items():
                    await self._store.memories.touch(ids, now, count)
            except Exception as exc:  # a hint lost, not a message: say so once per batch
                if not store_was_closed(exc):
                    log.warning("[memory] could not mark %d recalled memories used: %s", len(batch), exc)
                return

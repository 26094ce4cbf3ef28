"""Access times written off the reply path (issue 38, item 5): a memory recalled for a reply is marked used
(``last_accessed``, ``access_count``: the decay clock restarts) by a background task, not before the
model is asked, and the marks of the replies made meanwhile go out together.

The writer waits ``BATCH_DELAY_S`` after the first mark of a batch before writing it, so under load one
batch carries the marks of many replies — a few statements (one per distinct count) and one commit a
second instead of one statement, one transaction and one commit (a WAL flush) a reply: on PostgreSQL
~0.5 statements and ~0.5 transactions a message fewer (docs/scale-out.md, "Planning, and what was tried
on it"). A quiet gateway (one reply a second or fewer) still writes one batch a reply, a second later.

A mark is a hint to decay, not a record: one lost to a kill -9 (at most a batch: a second of marks)
costs a memory a little freshness, never a message or a fact. ``flush`` (at close, and in tests) writes
what is pending now, without waiting out the delay.
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

# How long the first mark of a batch waits for others: far below anything decay can tell apart (days),
# long enough that a busy gateway's replies share a statement and a commit.
BATCH_DELAY_S = 1.0


class LaterTouches:
    """Pending access marks (memory id -> times used) and the task that writes them."""

    def __init__(self, store: MemoryStore, delay_s: float = BATCH_DELAY_S) -> None:
        self._store = store
        self._delay_s = delay_s
        self._pending: dict[int, int] = {}
        self._task: asyncio.Task[None] | None = None
        self._now: asyncio.Event | None = None  # the writer's: set by ``flush`` (stop waiting, write)

    @property
    def pending(self) -> int:
        """Memories waiting for their mark."""
        return len(self._pending)

    def add(self, ids: Sequence[int]) -> None:
        """Mark ``ids`` used now, soon (in the background)."""
        for memory_id in ids:
            self._pending[memory_id] = self._pending.get(memory_id, 0) + 1
        if self._task is None or self._task.done():
            self._now = asyncio.Event()  # made in the running loop, with the task that waits on it
            self._task = asyncio.get_running_loop().create_task(self._run(self._now), name="memory-touches")

    async def flush(self) -> None:
        """Write what is pending now and wait for the writer (at close, and in tests)."""
        task, now = self._task, self._now
        if task is not None and now is not None and not task.done():
            now.set()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._pending:
            await self._write()

    async def _run(self, now: asyncio.Event) -> None:
        """Batches, each after the delay (or at once once ``flush`` set ``now``), until nothing is pending."""
        while self._pending:
            if not now.is_set():
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(now.wait(), self._delay_s)
            if not await self._write():
                return

    async def _write(self) -> bool:
        """One batch: ids used the same number of times share one statement. False when it failed."""
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
            return False
        return True

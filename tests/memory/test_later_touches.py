"""Recalled memories are marked used off the reply path (memory/touches.py): ``retrieve(later=True)``
returns before the mark is written; the marks land (access time and count) once the background writer
has run (a batch waits ``BATCH_DELAY_S`` for other replies' marks; ``flush`` does not), several
retrievals of one memory count several times; on both stores."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from memory.clock import utcnow
from memory.engine import MemoryEngine
from memory.records import Fact
from memory.touches import LaterTouches

pytestmark = pytest.mark.both_stores


async def test_later_marks_land_with_their_counts(engine: MemoryEngine) -> None:
    owner = "tina"
    last_week = utcnow() - timedelta(days=7)
    written = await engine.write(owner, Fact(content="Tina's kayak is red", project="_global"), last_week)
    before = await engine.store.memories.get(owner, written.id)
    assert before is not None and before.access_count == 0
    hits = await engine.retrieve(owner, "what colour is Tina's kayak", later=True)
    assert [h.id for h in hits] == [written.id]
    assert engine.touches.pending == 1  # returned before the mark was written
    for _ in range(2):
        await engine.retrieve(owner, "what colour is Tina's kayak", later=True)
    await engine.touches.flush()
    after = await engine.store.memories.get(owner, written.id)
    assert after is not None and after.access_count == 3
    assert after.last_accessed > before.last_accessed  # now, not last week
    assert engine.touches.pending == 0


async def test_a_batch_lands_after_its_delay_without_a_flush(engine: MemoryEngine) -> None:
    """The writer writes a batch by itself once its delay is out: two retrievals made meanwhile land in
    it, each counted."""
    owner = "uma"
    written = await engine.write(owner, Fact(content="Uma's bicycle is green", project="_global"))
    touches = LaterTouches(engine.store, delay_s=0.05)
    touches.add([written.id])
    touches.add([written.id])
    for _ in range(600):  # a generous ceiling (60 s) on a busy machine; normally one or two turns
        row = await engine.store.memories.get(owner, written.id)
        if row is not None and row.access_count == 2:
            break
        await asyncio.sleep(0.1)
    assert row is not None and row.access_count == 2
    assert touches.pending == 0


async def test_flush_does_not_wait_out_the_delay(engine: MemoryEngine) -> None:
    """``flush`` writes what is pending at once, however long the batch's delay (an hour here)."""
    owner = "vic"
    written = await engine.write(owner, Fact(content="Vic's canoe is blue", project="_global"))
    touches = LaterTouches(engine.store, delay_s=3600.0)
    touches.add([written.id])
    await asyncio.sleep(0)  # the writer starts waiting
    await asyncio.wait_for(touches.flush(), timeout=60.0)
    row = await engine.store.memories.get(owner, written.id)
    assert row is not None and row.access_count == 1
    assert touches.pending == 0

"""Recalled memories are marked used off the reply path (memory/touches.py): ``retrieve(later=True)``
returns before the mark is written; the marks land (access time and count) once the background writer
has run, several retrievals of one memory count several times; on both stores."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory.clock import utcnow
from memory.engine import MemoryEngine
from memory.records import Fact

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

"""The in-process seen marks a channel uses when no gateway hands it the database's: any shared mark is a
duplicate, and marks expire after the retention."""

from __future__ import annotations

from channels.seen import ProcessSeenMarks


async def test_any_shared_mark_is_a_duplicate() -> None:
    marks = ProcessSeenMarks()
    assert not await marks.seen_before([("event", "e1"), ("message", "m1")])
    await marks.mark([("event", "e1"), ("message", "m1")])
    assert await marks.seen_before([("event", "e2"), ("message", "m1")])
    assert not await marks.seen_before([("event", "m1")])
    assert not await marks.seen_before([])


async def test_marks_expire_after_the_retention() -> None:
    now = [1000.0]
    marks = ProcessSeenMarks(retention_seconds=60, clock=lambda: now[0])
    await marks.mark([("event", "e1")])
    now[0] += 59
    assert await marks.seen_before([("event", "e1")])
    now[0] += 2
    assert not await marks.seen_before([("event", "e1")])

"""The store contract, the gateway's state: a channel's dedup marks (``seen``), on both stores."""

from __future__ import annotations

from memory.store.protocol import MemoryStore

T0 = "2026-01-02 03:04:05"
T1 = "2026-01-04 00:00:00"


async def test_marks_are_kept_per_channel_and_any_one_counts(store: MemoryStore) -> None:
    assert not await store.seen.any_of("feishu", [("event", "e1")])
    assert not await store.seen.any_of("feishu", [])
    await store.seen.add("feishu", [("event", "e1"), ("message", "m1")], T0)
    assert await store.seen.any_of("feishu", [("event", "e2"), ("message", "m1")])  # new event, same message
    assert not await store.seen.any_of("feishu", [("event", "m1"), ("message", "e1")])  # kinds are apart
    assert not await store.seen.any_of("other", [("event", "e1")])  # channels are apart
    assert await store.seen.count("feishu") == 2 and await store.seen.count() == 2


async def test_marking_again_keeps_one_row_and_its_first_time(store: MemoryStore) -> None:
    await store.seen.add("feishu", [("event", "e1"), ("event", "e1")], T0)
    await store.seen.add("feishu", [("event", "e1"), ("message", "消息🙂")], T1)
    assert await store.seen.count("feishu") == 2
    assert await store.seen.any_of("feishu", [("message", "消息🙂")])
    assert await store.seen.prune("2026-01-03 00:00:00") == 1  # e1 kept its first time, T0
    assert not await store.seen.any_of("feishu", [("event", "e1")])
    assert await store.seen.any_of("feishu", [("message", "消息🙂")])


async def test_a_rolled_back_mark_is_not_kept(store: MemoryStore) -> None:
    try:
        async with store.transaction():
            await store.seen.add("feishu", [("event", "e9")], T0)
            raise RuntimeError("abandon")
    except RuntimeError:
        pass
    assert await store.seen.count() == 0

"""The store contract, the gateway's state: a channel's dedup marks (``seen``) and the memory page's token
and sessions (``page``), on both stores."""

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


async def test_the_first_stored_secret_wins(store: MemoryStore) -> None:
    assert await store.page.secret("access_token", "first") == "first"
    assert await store.page.secret("access_token", "second") == "first"  # another gateway racing


async def test_sessions_expire_and_only_the_most_recently_used_are_kept(store: MemoryStore) -> None:
    page = store.page
    await page.open_session("h1", "c1", "2026-01-02 00:00:00", keep=2, idle_since="2026-01-01 00:00:00")
    await page.open_session("h2", "c2", "2026-01-02 00:00:01", keep=2, idle_since="2026-01-01 00:00:00")
    assert await page.session("h1", "2026-01-01 12:00:00") == ("c1", "[]", "2026-01-02 00:00:00")
    await page.touch("h1", "2026-01-02 00:00:05")
    await page.set_flash("h1", '["已保存 🙂"]')
    await page.open_session("h3", "c3", "2026-01-02 00:00:06", keep=2, idle_since="2026-01-01 00:00:00")
    assert await page.session("h2", "2026-01-01 12:00:00") is None  # least recently used: dropped
    assert await page.session("h1", "2026-01-01 12:00:00") == ("c1", '["已保存 🙂"]', "2026-01-02 00:00:05")
    assert await page.session("h1", "2026-01-02 00:00:06") is None  # idle too long for this cutoff
    await page.open_session("h4", "c4", "2026-01-03 00:00:00", keep=5, idle_since="2026-01-02 00:00:06")
    assert await page.count() == 2  # h1 idle since before the cutoff: deleted; h3 and h4 kept

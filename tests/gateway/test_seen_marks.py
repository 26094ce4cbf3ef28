"""Feishu's dedup marks in the memory database (both stores): a redelivery is recognised after the channel
and the database are reopened, under a new event id too, and marks older than 48 hours are pruned."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from channels.feishu.channel import FeishuChannel
from gateway.seen_marks import StoreSeenMarks
from localservers.feishu_server import FeishuStub, message_event, post_callback
from memory.store.open import open_store
from tests.support.feishu_channel import ENCRYPT_KEY, TOKEN, Inbox, callback_url, make_settings


async def test_marks_are_pruned_after_48_hours(memory_db: str) -> None:
    now = [datetime(2026, 3, 1, 12, tzinfo=UTC)]
    store = await open_store(memory_db, warm_text=False)
    try:
        marks = StoreSeenMarks(store.seen, "feishu", clock=lambda: now[0])
        await marks.mark([("event", "e1"), ("message", "")])  # an empty key is no mark
        assert await store.seen.count("feishu") == 1
        now[0] += timedelta(hours=47)
        await marks.mark([("event", "e2")])
        assert await marks.seen_before([("event", "e1")])
        now[0] += timedelta(hours=2)  # 49 h after e1, and an hour since the last prune
        await marks.mark([("event", "e3")])
        assert not await marks.seen_before([("event", "e1")])
        assert await marks.seen_before([("event", "e2")]) and await marks.seen_before([("event", "e3")])
    finally:
        await store.close()


async def test_a_redelivery_is_answered_once_across_a_restart(
    tmp_path: Path, feishu: FeishuStub, memory_db: str
) -> None:
    first = message_event("hello", token=TOKEN, event_id="ev_1", message_id="om_1")
    again = message_event("hello", token=TOKEN, event_id="ev_2", message_id="om_1")  # new event id
    delivered: list[str] = []
    for incoming in (first, again):  # each time a fresh channel on a reopened database: a restart
        store = await open_store(memory_db, warm_text=False)
        channel, inbox = FeishuChannel(make_settings(tmp_path, feishu)), Inbox()
        channel.use_seen_marks(StoreSeenMarks(store.seen, channel.name))
        await channel.start(inbox.deliver)
        try:
            status, _ = await post_callback(callback_url(channel), incoming, encrypt_key=ENCRYPT_KEY)
            assert status == 200
            await channel.stop_receiving()
            delivered += [m.text for m in inbox.messages]
        finally:
            await channel.stop()
            await store.close()
    assert delivered == ["hello"]

"""The seen-ids store: new vs duplicate, any shared id is a duplicate, kept across restarts, pruned after
48 hours (with an injected clock)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from channels.feishu.seen import RETENTION_SECONDS, SeenStore

HOUR = 3600.0


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def test_first_time_then_duplicate(tmp_path: Path) -> None:
    store = await SeenStore.open(tmp_path / "channels.db", "feishu")
    try:
        assert await store.first_time("event:e1", "message:m1")
        assert not await store.first_time("event:e1", "message:m1")
        assert not await store.first_time("event:e2", "message:m1")  # same message, new event id
        assert not await store.first_time("event:e1", "message:m2")
        assert await store.first_time("event:e3", "message:m3")
        assert await store.first_time("", "")  # nothing to remember: never a duplicate
        assert await store.count() == 6  # e1 m1 e2 m2 e3 m3: every id of a duplicate is recorded too
    finally:
        await store.close()


async def test_seen_ids_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "state" / "channels.db"
    store = await SeenStore.open(path, "feishu")
    assert await store.first_time("event:e1", "message:m1")
    await store.close()
    store = await SeenStore.open(path, "feishu")
    try:
        assert not await store.first_time("event:e9", "message:m1")
    finally:
        await store.close()


async def test_scopes_do_not_share_ids(tmp_path: Path) -> None:
    feishu = await SeenStore.open(tmp_path / "channels.db", "feishu")
    other = await SeenStore.open(tmp_path / "channels.db", "other")
    try:
        assert await feishu.first_time("message:m1")
        assert await other.first_time("message:m1")
        assert not await other.first_time("message:m1")
    finally:
        await feishu.close()
        await other.close()


async def test_ids_are_kept_48_hours_then_pruned(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "channels.db"
    store = await SeenStore.open(path, "feishu", clock=clock)
    try:
        assert RETENTION_SECONDS == 48 * HOUR
        assert await store.first_time("event:old", "message:old")
        clock.now += 47 * HOUR
        assert not await store.first_time("event:old")  # a late redelivery is still caught
        assert await store.first_time("event:new")
        clock.now += 2 * HOUR  # "old" is now 49 h old, "new" 2 h
        assert await store.prune() == 2
        rows = sqlite3.connect(path).execute("SELECT id FROM seen_ids ORDER BY id").fetchall()
        assert rows == [("event:new",)]
    finally:
        await store.close()


async def test_pruning_happens_on_its_own_now_and_then(tmp_path: Path) -> None:
    clock = Clock()
    store = await SeenStore.open(tmp_path / "channels.db", "feishu", clock=clock)
    try:
        assert await store.first_time("event:old")
        clock.now += 49 * HOUR
        assert await store.first_time("event:fresh")  # more than an hour since the last prune: prunes
        assert await store.count() == 1
    finally:
        await store.close()


async def test_open_prunes_what_expired_while_stopped(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "channels.db"
    store = await SeenStore.open(path, "feishu", clock=clock)
    assert await store.first_time("event:old")
    await store.close()
    clock.now += 49 * HOUR
    store = await SeenStore.open(path, "feishu", clock=clock)
    try:
        assert await store.count() == 0
    finally:
        await store.close()


async def test_seen_any_looks_without_recording(tmp_path: Path) -> None:
    store = await SeenStore.open(tmp_path / "channels.db", "feishu")
    try:
        assert not await store.seen_any("event:e1", "message:m1")
        assert not await store.seen_any("event:e1")  # looking recorded nothing
        await store.first_time("event:e1", "message:m1")
        assert await store.seen_any("event:e9", "message:m1") and await store.seen_any("event:e1")
        assert not await store.seen_any("", "")
    finally:
        await store.close()

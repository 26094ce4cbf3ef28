"""Tier 0 sessions: recent history per chat, kept across restarts, reset by a new session."""

from __future__ import annotations

from pathlib import Path

from memory import sessions as sessions_module
from memory.engine import MemoryEngine
from memory.sessions import SessionStore


async def test_history_is_the_latest_messages_oldest_first(engine: MemoryEngine) -> None:
    store = SessionStore(engine.store.sessions)
    for i in range(5):
        await store.append("telegram:1", "user", f"q{i}")
        await store.append("telegram:1", "assistant", f"a{i}")
    assert await store.history("telegram:1", 4) == [
        ("user", "q3"),
        ("assistant", "a3"),
        ("user", "q4"),
        ("assistant", "a4"),
    ]
    assert await store.history("telegram:1", 0) == []
    assert await store.history("telegram:2", 10) == []  # chats never mix


async def test_history_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    async with await MemoryEngine.open(path) as engine:
        await SessionStore(engine.store.sessions).append("console:local", "user", "我叫小明")
    async with await MemoryEngine.open(path) as engine:
        assert await SessionStore(engine.store.sessions).history("console:local", 20) == [
            ("user", "我叫小明")
        ]


async def test_new_session_hides_the_old_conversation(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    async with await MemoryEngine.open(path) as engine:
        store = SessionStore(engine.store.sessions)
        await store.append("feishu:oc_1", "user", "old topic")
        assert await store.new_session("feishu:oc_1") == 2
        await store.append("feishu:oc_1", "user", "new topic")
        assert await store.history("feishu:oc_1", 20) == [("user", "new topic")]
    async with await MemoryEngine.open(path) as engine:  # the session number is persisted too
        store = SessionStore(engine.store.sessions)
        assert await store.current("feishu:oc_1") == 2
        assert await store.history("feishu:oc_1", 20) == [("user", "new topic")]


async def test_old_messages_are_pruned(engine: MemoryEngine, monkeypatch) -> None:
    monkeypatch.setattr(sessions_module, "KEEP_MESSAGES", 10)
    monkeypatch.setattr(sessions_module, "PRUNE_EVERY", 5)
    store = SessionStore(engine.store.sessions)
    for i in range(40):
        await store.append("telegram:1", "user", f"m{i}")
    rows = await engine.store.db.read("SELECT COUNT(*) FROM session_messages WHERE chat_key = 'telegram:1'")
    assert rows[0][0] <= 15
    assert (await store.history("telegram:1", 3))[-1] == ("user", "m39")

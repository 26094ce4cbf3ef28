"""A chat's Tier 0 session as a number on its kept turns (``memory/store/turn_sessions.py``) on both stores:
an exchange writes its turns once; the history is the current session's turns (newest first, the read's
``LIMIT`` the prune); ``/new`` raises the number and deletes nothing; memory off keeps the session table;
the age prune spares what the history may show; and the migration to schema 24 leaves the history the
model sees — read alone and with a claim — exactly as it was."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from localservers import postgres_cluster as throwaway_pg
from memory.store import schema_tables
from memory.store.claim_rows import ClaimedRow, parse_history
from memory.store.open import open_store
from memory.store.protocol import MemoryStore
from memory.store.turn_sessions import KEEP_MESSAGES, TURN_SESSIONS
from tests.memory.store.exchanges import T0, alternating, exchange
from tests.memory.store.old_homes import old_postgres_home, old_sqlite_home

BUDGET = {"token_budget": 100_000, "quiet_gap_s": 3600.0}
LATER = "2026-03-01 00:00:00"
CHAT = "telegram:42"


async def _claimed_history(store: MemoryStore, chat_id: str, limit: int) -> list[tuple[str, str]]:
    """The chat's history as a claim reads it (a message stored, held and claimed), newest first."""
    stored, _ = await store.inbox.add_and_hold("telegram", chat_id, f"d{chat_id}", "next", 1, "", "r1", 60.0)
    assert stored is not None
    claimed = await store.chat_holds.next_message("telegram", chat_id, "r1", history=limit)
    assert isinstance(claimed, ClaimedRow) and claimed.id == stored
    return parse_history(claimed.history)


async def test_an_exchange_keeps_its_words_once_with_the_session(store: MemoryStore) -> None:
    await store.exchange.write(alternating("ann", "hi", "hello", "how are you", "fine"), **BUDGET)
    assert await store.db.scalar("SELECT COUNT(*) FROM session_messages") == 0
    assert await store.db.read("SELECT DISTINCT session_no FROM conversation_turns") == [(1,)]
    newest = [("assistant", "fine"), ("user", "how are you"), ("assistant", "hello")]
    assert await store.sessions.recent(CHAT, 1, 3) == newest  # the read's LIMIT
    assert await _claimed_history(store, "42", 3) == newest
    assert await store.sessions.recent("telegram:43", 1, 3) == []  # chats never mix


async def test_new_raises_the_number_and_deletes_nothing(store: MemoryStore) -> None:
    await store.exchange.write(alternating("ann", "old topic", "ok"), **BUDGET)
    await store.sessions.start(CHAT, 2, T0)  # /new
    assert await store.sessions.current(CHAT) == 2
    assert await store.sessions.recent(CHAT, 2, 10) == [] and await _claimed_history(store, "42", 10) == []
    assert await store.turns.count("ann") == 2  # the old session's turns stay in the conversation tier
    await store.exchange.write(replace(exchange("ann", [("user", "new topic")]), session=2), **BUDGET)
    assert await store.sessions.recent(CHAT, 2, 10) == [("user", "new topic")]
    assert await store.sessions.recent(CHAT, 1, 10) == [("assistant", "ok"), ("user", "old topic")]


async def test_memory_off_keeps_the_session_table(store: MemoryStore) -> None:
    await store.exchange.write(exchange("ann", [("user", "a"), ("assistant", "b")], keep=False), **BUDGET)
    assert await store.turns.count(None) == 0
    assert await store.db.scalar("SELECT COUNT(*) FROM session_messages") == 2
    assert await store.sessions.recent(CHAT, 1, 10) == [("assistant", "b"), ("user", "a")]
    assert await _claimed_history(store, "42", 10) == [("assistant", "b"), ("user", "a")]
    await store.sessions.keep_newest(CHAT, 1, 1)
    assert await store.sessions.recent(CHAT, 1, 10) == [("assistant", "b")]
    await store.sessions.start(CHAT, 2, T0)
    assert await store.db.scalar("SELECT COUNT(*) FROM session_messages") == 0


async def test_the_age_prune_spares_what_the_history_shows(store: MemoryStore) -> None:
    texts = [f"t{n}" for n in range(KEEP_MESSAGES + 2)]
    await store.exchange.write(alternating("ann", *texts), **BUDGET)
    ids = [int(r[0]) for r in await store.buffer.oldest("ann", due_only=False)]
    async with store.transaction():
        assert await store.buffer.remove(ids) == len(ids)  # extracted: only the history holds them
    assert await store.turns.prune(LATER) == 2  # the two the read's LIMIT no longer reaches
    assert len(await store.sessions.recent(CHAT, 1, KEEP_MESSAGES)) == KEEP_MESSAGES
    assert (await store.sessions.recent(CHAT, 1, 1))[0][1] == texts[-1]
    await store.sessions.start(CHAT, 2, T0)  # /new: the old session is history no more
    assert await store.turns.prune(LATER) == KEEP_MESSAGES


# A version-23 home. Chat 42: its current session is 2, every row with its kept twin (the same words
# said twice at once: two rows, two twins), and a row of session 1 left behind. Chat 43 (never reset):
# its first row has no twin (said while memory was off). Chat 44: memory off, no turns at all. Chat 45:
# both rows have twins, kept in the other order. Turns of no session: an import (chat 42, "imported").
_SESSIONS = "INSERT INTO chat_sessions (chat_key, session_no, started_at) VALUES ('telegram:42', 2, '{T0}')"
_ROWS = (  # (chat, session, role, content)
    ("42", 1, "user", "before the new"),
    ("42", 2, "user", "hi"),
    ("42", 2, "assistant", "hello"),
    ("42", 2, "user", "same"),
    ("42", 2, "user", "same"),
    ("42", 2, "assistant", "ok"),
    ("43", 1, "user", "said with memory off"),
    ("43", 1, "user", "said with memory on"),
    ("43", 1, "assistant", "noted"),
    ("44", 1, "user", "memory off"),
    ("44", 1, "assistant", "fine"),
    ("45", 1, "user", "first"),
    ("45", 1, "assistant", "second"),
)
_TURNS = (  # (chat, role, content): the order they were kept in
    ("42", "user", "imported"),
    ("42", "user", "before the new"),
    ("42", "user", "hi"),
    ("42", "assistant", "hello"),
    ("42", "user", "same"),
    ("42", "user", "same"),
    ("42", "assistant", "ok"),
    ("43", "user", "said with memory on"),
    ("43", "assistant", "noted"),
    ("45", "assistant", "second"),
    ("45", "user", "first"),
)
_OLD_SQL = (
    _SESSIONS.format(T0=T0),
    "INSERT INTO session_messages (chat_key, session_no, role, content, created_at) VALUES "
    + ", ".join(f"('telegram:{c}', {n}, '{r}', '{t}', '{T0}')" for c, n, r, t in _ROWS),
    "INSERT INTO conversation_turns (owner, channel, chat_id, role, content, search_text, created_at) VALUES "
    + ", ".join(f"('ann', 'telegram', '{c}', '{r}', '{t}', '{t}', '{T0}')" for c, r, t in _TURNS),
)
# What the model saw at version 23 (the read of session_messages then), newest first.
_SEEN = {
    "42": [("assistant", "ok"), ("user", "same"), ("user", "same"), ("assistant", "hello"), ("user", "hi")],
    "43": [("assistant", "noted"), ("user", "said with memory on"), ("user", "said with memory off")],
    "44": [("assistant", "fine"), ("user", "memory off")],
    "45": [("assistant", "second"), ("user", "first")],
}
_BEFORE = schema_tables.TEMPLATES.index(TURN_SESSIONS)  # version 23


async def _migrated_home(where: str) -> None:
    """The home at ``where``, left at version 23 with live sessions, opened now: every chat's history is
    what it was, read alone and with a claim; a fully paired session lives on its turns."""
    store = await open_store(where, warm_text=False)
    try:
        for chat_id, seen in _SEEN.items():
            session = await store.sessions.current(f"telegram:{chat_id}") or 1
            assert await store.sessions.recent(f"telegram:{chat_id}", session, 20) == seen, chat_id
            assert await store.sessions.recent(f"telegram:{chat_id}", session, 2) == seen[:2], chat_id
            assert await _claimed_history(store, chat_id, 20) == seen, chat_id
        moved = await store.db.read(
            "SELECT chat_id, content FROM conversation_turns WHERE session_no > 0 ORDER BY id"
        )
        assert [tuple(r) for r in moved] == [("42", t) for _, t in reversed(_SEEN["42"])]
        left = await store.db.read("SELECT DISTINCT chat_key FROM session_messages ORDER BY chat_key")
        assert [r[0] for r in left] == ["telegram:42", "telegram:43", "telegram:44", "telegram:45"]
        # moved; the row of session 1 was never shown and waits for the next /new
        still = "SELECT COUNT(*) FROM session_messages WHERE chat_key = 'telegram:42' AND session_no = 2"
        assert await store.db.scalar(still) == 0
        assert await store.turns.count("ann") == len(_TURNS)  # no turn added or lost
        # A chat whose session stayed in the table: its next exchange's turns are its newest part.
        later = replace(alternating("ann", "after", "yes"), chat_id="43", chat_key="telegram:43")
        await store.exchange.write(later, **BUDGET)
        assert await store.sessions.recent("telegram:43", 1, 3) == [
            ("assistant", "yes"),
            ("user", "after"),
            ("assistant", "noted"),
        ]
    finally:
        await store.close()


async def test_the_migration_keeps_every_history_sqlite(tmp_path: Path) -> None:
    await _migrated_home(old_sqlite_home(tmp_path / "old.db", _BEFORE, _OLD_SQL))


async def test_the_migration_keeps_every_history_postgres(postgres_cluster: throwaway_pg.Cluster) -> None:
    async with old_postgres_home(postgres_cluster, "tierclaw_sessions", _BEFORE, _OLD_SQL) as url:
        await _migrated_home(url)

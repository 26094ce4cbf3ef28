"""One table for the turn text (``memory/store/turn_watermark.py``) on both stores: the extraction buffer is
each owner's kept turns past its watermark plus the stragglers with a failure row; a batch's write takes
its turns once; a failed turn stays buffered when later turns pass the watermark; the age prune keeps every
turn an extraction still waits for; and the migration moves a live buffer without losing a row."""

from __future__ import annotations

from pathlib import Path

from localservers import postgres_cluster as throwaway_pg
from memory.store import schema_tables
from memory.store.open import open_store
from memory.store.protocol import MemoryStore
from memory.store.turn_watermark import TURN_WATERMARK
from tests.memory.store.exchanges import T0, alternating
from tests.memory.store.old_homes import old_postgres_home, old_sqlite_home

LATER = "2026-03-01 00:00:00"
BUDGET = {"token_budget": 1000, "quiet_gap_s": 3600.0}


async def _live(store: MemoryStore, owner: str) -> list[str]:
    return [str(r[6]) for r in await store.buffer.oldest(owner, due_only=False)]


async def _take(store: MemoryStore, ids: list[int]) -> int:
    async with store.transaction():
        return await store.buffer.remove(ids)


async def test_a_batch_moves_the_watermark_once(store: MemoryStore) -> None:
    await store.exchange.write(alternating("ann", "one", "two"), **BUDGET)
    ids = [int(r[0]) for r in await store.buffer.oldest("ann", due_only=False)]
    assert await _live(store, "ann") == ["one", "two"]
    assert await _take(store, ids[:1]) == 1
    assert await _live(store, "ann") == ["two"]
    assert await _take(store, ids[:1]) == 0  # taken already: the batch would be written twice
    await store.exchange.write(alternating("ann", "three"), **BUDGET)
    assert await _live(store, "ann") == ["two", "three"]
    assert await store.extraction_due.counted_tokens("ann") == await store.buffer.pending_tokens("ann") == 8
    assert await store.turns.count("ann") == 3  # the text is kept once, in the conversation tier


async def test_a_failed_turn_stays_buffered_behind_the_watermark(store: MemoryStore) -> None:
    await store.exchange.write(alternating("bea", "first", "second", "third"), **BUDGET)
    first, second, third = [int(r[0]) for r in await store.buffer.oldest("bea", due_only=False)]
    await store.buffer.mark_failed([first], 1, 3600.0, False, "boom")  # waits out its retry
    assert await _live(store, "bea") == ["first", "second", "third"]
    assert [int(r[0]) for r in await store.buffer.oldest("bea", due_only=True)] == [second, third]
    assert await _take(store, [second, third]) == 2  # the watermark passes the waiting turn
    assert await _live(store, "bea") == ["first"]
    assert await store.buffer.attempts([first]) == 1
    await store.buffer.mark_failed([first], 5, 60.0, True, "boom")  # a dead letter now
    assert await _live(store, "bea") == [] and await store.buffer.count("bea", dead=True) == 1
    assert await store.buffer.requeue_dead("bea") == 1
    assert await _live(store, "bea") == ["first"]
    assert await store.extraction_due.counted_tokens("bea") == 4
    assert await _take(store, [first]) == 1 and await store.buffer.count("bea") == 0
    assert await store.extraction_due.counted_tokens("bea") == 0


async def test_turns_kept_before_an_owner_buffers_are_not_extracted(store: MemoryStore) -> None:
    # An import keeps turns without buffering them; the owner's first exchange starts after them.
    await store.turns.add(
        "cy", channel="telegram", chat_id="42", role="user", content="old", search_text="old", at=T0
    )
    await store.exchange.write(alternating("cy", "new"), **BUDGET)
    assert await _live(store, "cy") == ["new"]
    claimed = await store.extraction_due.claim("dee", "r1", 60.0)  # a forced flush of an owner with no row
    await store.turns.add(
        "dee", channel="telegram", chat_id="42", role="user", content="x", search_text="x", at=T0
    )
    assert claimed is not None and await _live(store, "dee") == ["x"]  # kept after the row: buffered


async def test_the_prune_keeps_what_extraction_waits_for(store: MemoryStore) -> None:
    await store.exchange.write(alternating("eve", "extracted", "failed", "waiting"), **BUDGET)
    await store.sessions.start("telegram:42", 2, T0)  # out of the history (its newest turns stay: below)
    extracted, failed, _ = [int(r[0]) for r in await store.buffer.oldest("eve", due_only=False)]
    await store.buffer.mark_failed([failed], 5, 60.0, True, "boom")
    assert await _take(store, [extracted]) == 1
    assert await store.turns.prune(LATER) == 1  # only the extracted turn goes
    assert await _live(store, "eve") == ["waiting"] and await store.buffer.count("eve", dead=True) == 1


async def test_a_release_with_nothing_left_keeps_the_watermark(store: MemoryStore) -> None:
    await store.exchange.write(alternating("fin", "a"), **BUDGET)
    [only] = [int(r[0]) for r in await store.buffer.oldest("fin", due_only=False)]
    claimed = await store.extraction_due.claim("fin", "r1", 60.0)
    assert claimed is not None
    assert await _take(store, [only]) == 1
    await store.extraction_due.release("fin", "r1", claimed[1], claimed[0], None)
    assert await store.extraction_due.get("fin") is None and await store.extraction_due.count_due() == 0
    await store.exchange.write(alternating("fin", "b"), **BUDGET)
    assert await _live(store, "fin") == ["b"]  # "a" is not extracted again


# A version-22 home: ann's turns as the exchanges kept them (one extracted, "same" said twice at once
# but kept once), her buffer (live, waiting out a retry, dead), and bob's turn buffered without a kept
# twin (``ExtractionService.record``, or his conversation tier off).
_OLD_TURNS = (("old fact", T0), ("hi", T0), ("same", T0), ("retry me", T0), ("dead one", T0))
_OLD_BUFFER = (  # (owner, content, tokens, attempts, next try, dead)
    ("ann", "hi", 3, 0, None, 0),
    ("ann", "same", 5, 0, None, 0),
    ("ann", "same", 5, 0, None, 0),
    ("ann", "retry me", 7, 2, "2099-01-01 00:00:00", 0),
    ("ann", "dead one", 11, 5, None, 1),
    ("bob", "off", 13, 0, None, 0),
)


def _q(value: object) -> str:
    return "NULL" if value is None else f"'{value}'" if isinstance(value, str) else str(value)


_OLD_SQL = (
    "INSERT INTO conversation_turns (owner, channel, chat_id, role, content, search_text, created_at) VALUES "
    + ", ".join(f"('ann', 'telegram', '42', 'user', '{c}', '{c}', '{at}')" for c, at in _OLD_TURNS),
    "INSERT INTO extraction_buffer (owner, channel, chat_id, sender_id, role, content, token_count, "
    "created_at, attempts, next_attempt_at, dead, last_error) VALUES "
    + ", ".join(
        f"('{o}', 'telegram', '42', '7', 'user', '{c}', {n}, '{T0}', {a}, {_q(at)}, {d}, 'boom')"
        for o, c, n, a, at, d in _OLD_BUFFER
    ),
    "INSERT INTO extraction_due (owner, due_at, live_tokens) VALUES ('ann', '2026-01-02 04:00:00', 20)",
)


async def _migrated_home(where: str) -> None:
    """The home at ``where``, left at version 22 with a buffer in it, opened now: every buffered turn
    waits for extraction, once, and nothing else does."""
    store = await open_store(where, warm_text=False)
    try:
        # Not "old fact"; the second "same" had no kept twin: kept now, after the turns kept before.
        assert await _live(store, "ann") == ["hi", "same", "retry me", "same"]
        assert [str(r[6]) for r in await store.buffer.oldest("ann", due_only=True)] == ["hi", "same", "same"]
        assert await store.buffer.count("ann", dead=True) == 1
        assert (
            await store.buffer.pending_tokens("ann") == await store.extraction_due.counted_tokens("ann") == 20
        )
        assert await _live(store, "bob") == ["off"]
        assert (
            await store.buffer.pending_tokens("bob") == await store.extraction_due.counted_tokens("bob") == 13
        )
        assert await store.turns.count("ann") == 6 and await store.turns.count("bob") == 1
        rows = await store.buffer.oldest("ann", due_only=False)
        assert [(int(r[7]), int(r[9]), str(r[4])) for r in rows] == [
            (3, 0, "7"),
            (5, 0, "7"),
            (7, 2, "7"),
            (5, 0, "7"),
        ]
        ann, bob = await store.extraction_due.get("ann"), await store.extraction_due.get("bob")
        assert ann is not None and ann[0] == "2026-01-02 04:00:00"  # its due time kept
        assert bob is not None  # an owner with live turns and no due time gets one
        ids = [int(r[0]) for r in rows]
        assert len(set(ids)) == 4
        assert await _take(store, ids) == 4 and await _take(store, ids) == 0
        assert await _live(store, "ann") == [] and await store.buffer.count("ann", dead=True) == 1
        await store.exchange.write(alternating("ann", "after"), **BUDGET)
        assert await _live(store, "ann") == ["after"]
    finally:
        await store.close()


_BEFORE = schema_tables.TEMPLATES.index(TURN_WATERMARK)  # version 22: the one before the watermark


async def test_the_migration_moves_a_sqlite_buffer(tmp_path: Path) -> None:
    await _migrated_home(old_sqlite_home(tmp_path / "old.db", _BEFORE, _OLD_SQL))


async def test_the_migration_moves_a_postgres_buffer(postgres_cluster: throwaway_pg.Cluster) -> None:
    async with old_postgres_home(postgres_cluster, "tierclaw_watermark", _BEFORE, _OLD_SQL) as url:
        await _migrated_home(url)

"""The extraction buffer's running count (``memory/store/buffer_count.py``) on both stores: after every
statement that changes the owner's live buffer — an exchange, an append, an extraction's removal, a batch
turned dead letters, dead letters re-queued, a retried answered-mark, a copy, the migration — the count
equals the sum it replaces, and extraction falls due at the same buffer size as the sum made it."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from localservers import postgres_cluster as throwaway_pg
from memory.clock import from_db, utcnow
from memory.store import schema_tables
from memory.store.buffer_count import BUFFER_COUNT
from memory.store.claim_rows import ClaimedRow
from memory.store.copying import HasDatabase, copy_all
from memory.store.open import open_store
from memory.store.protocol import MemoryStore
from tests.memory.store.exchanges import T0, alternating
from tests.memory.store.old_homes import old_postgres_home, old_sqlite_home


async def _agrees(store: MemoryStore, owner: str) -> int:
    """The owner's count, checked against the buffer's sum."""
    counted = await store.extraction_due.counted_tokens(owner)
    assert counted == await store.buffer.pending_tokens(owner)
    return counted


async def _append(store: MemoryStore, owner: str, tokens: int) -> int:
    return await store.buffer.append(owner, "telegram", "42", "7", "user", "hello", tokens, T0)


async def test_exchanges_count_and_fall_due_where_the_sum_did(store: MemoryStore) -> None:
    budget = {"token_budget": 10, "quiet_gap_s": 3600.0}
    assert await store.exchange.write(alternating("ann", "one", "two"), **budget) is False  # 8 < 10
    assert await _agrees(store, "ann") == 8
    assert await store.exchange.write(alternating("ann", "three"), **budget) is True  # 12 >= 10
    assert await _agrees(store, "ann") == 12
    await store.exchange.write(alternating("ben", "elsewhere"), **budget)
    assert await _agrees(store, "ben") == 4 and await _agrees(store, "ann") == 12


async def test_appends_and_pushes_count_and_fall_due_where_the_sum_did(store: MemoryStore) -> None:
    await _append(store, "cat", 4)  # no row yet: the push counts the buffer
    assert await store.extraction_due.push("cat", 10, 3600.0) is False
    assert await _agrees(store, "cat") == 4
    await _append(store, "cat", 4)
    assert await store.extraction_due.push("cat", 10, 3600.0) is False
    await _append(store, "cat", 4)
    assert await store.extraction_due.push("cat", 10, 3600.0) is True
    assert await _agrees(store, "cat") == 12


async def test_extraction_removal_and_dead_letters_keep_the_count(store: MemoryStore) -> None:
    await store.exchange.write(alternating("dot", "a", "b", "c", "d"), token_budget=100, quiet_gap_s=60)
    ids = [int(r[0]) for r in await store.buffer.oldest("dot", due_only=False)]
    assert await _agrees(store, "dot") == 16
    # An extraction's batch leaves in its write transaction, with the count.
    async with store.transaction():
        assert await store.buffer.remove(ids[:1]) == 1
    assert await _agrees(store, "dot") == 12
    # A failed attempt that is not the last keeps the turns live; the last makes them dead letters.
    await store.buffer.mark_failed(ids[1:3], 1, 60.0, False, "boom")
    assert await _agrees(store, "dot") == 12
    await store.buffer.mark_failed(ids[1:3], 5, 60.0, True, "boom")
    assert await _agrees(store, "dot") == 4
    # Removing a dead letter takes nothing off; re-queued ones count again.
    assert await store.buffer.requeue_dead("dot") == 2
    assert await _agrees(store, "dot") == 12
    await store.buffer.mark_failed(ids[1:2], 5, 60.0, True, "boom")
    async with store.transaction():
        assert await store.buffer.remove(ids[1:2]) == 1
    assert await _agrees(store, "dot") == 8
    # The rest extracted: nothing is counted.
    async with store.transaction():
        await store.buffer.remove(ids[2:])
    assert await _agrees(store, "dot") == 0


async def test_requeued_dead_letters_of_an_owner_without_a_due_time_are_due_now(store: MemoryStore) -> None:
    first = await _append(store, "eve", 4)
    assert await store.extraction_due.push("eve", 100, 3600.0) is False
    claimed = await store.extraction_due.claim("eve", "r1", 60.0)
    assert claimed is not None
    await store.buffer.mark_failed([first], 5, 60.0, True, "boom")
    await store.extraction_due.release("eve", "r1", claimed[1], claimed[0], None)  # nothing live left
    assert await store.extraction_due.get("eve") is None and await _agrees(store, "eve") == 0
    assert await store.buffer.requeue_dead(None) == 1
    due = await store.extraction_due.get("eve")
    assert due is not None and (from_db(due[0]) - utcnow()).total_seconds() < 60
    assert await _agrees(store, "eve") == 4


async def test_a_retried_answered_mark_counts_its_exchange_once(store: MemoryStore) -> None:
    one, _, claim = await store.inbox.add_hold_and_claim("telegram", "42", "u1", "hi", 1, "", "r1", 60.0)
    assert one is not None and isinstance(claim, ClaimedRow)
    prepared = store.exchange.prepare(alternating("fay", "hi", "hello"), token_budget=100, quiet_gap_s=60)
    first = await store.chat_holds.answered_then_next(one, "telegram", "42", "r1", 1, exchange=prepared)
    again = await store.chat_holds.answered_then_next(one, "telegram", "42", "r1", 1, exchange=prepared)
    assert first.wrote and not again.wrote
    assert await _agrees(store, "fay") == 8


async def test_a_copy_counts_the_copied_buffer(store: MemoryStore, tmp_path: Path) -> None:
    await store.exchange.write(alternating("gil", "a", "b"), token_budget=100, quiet_gap_s=60)
    dead = await _append(store, "gil", 4)
    await store.buffer.mark_failed([dead], 5, 60.0, True, "boom")
    target = await open_store(str(tmp_path / "copy.db"), warm_text=False)
    try:
        await copy_all(cast(HasDatabase, store), cast(HasDatabase, target))
        assert await _agrees(target, "gil") == 8
        assert await target.extraction_due.get("gil") is not None  # due: extracted at the copy's start
    finally:
        await target.close()


# The version before the count (its migration and every later one run on the home).
_BEFORE_COUNT = schema_tables.TEMPLATES.index(BUFFER_COUNT)
_OLD_ROWS = (("hal", 5, 0), ("hal", 7, 0), ("hal", 100, 1), ("ida", 3, 0))  # (owner, tokens, dead)
_OLD_BUFFER = (
    "INSERT INTO extraction_buffer (owner, channel, chat_id, sender_id, role, content, token_count, "
    "created_at, dead) VALUES "
    + ", ".join(f"('{o}', 'telegram', '42', '7', 'user', 'x', {n}, '{T0}', {d})" for o, n, d in _OLD_ROWS)
)
_OLD_DUE = "INSERT INTO extraction_due (owner, due_at) VALUES ('hal', '2026-01-02 04:00:00')"


async def _migrated_home_counts(where: str) -> None:
    """The home at ``where``, left a version before the count with a buffer in it, opened now."""
    store = await open_store(where, warm_text=False)
    try:
        assert await _agrees(store, "hal") == 12  # the dead letter not counted
        assert await _agrees(store, "ida") == 3
        hal, ida = await store.extraction_due.get("hal"), await store.extraction_due.get("ida")
        assert hal is not None and hal[0] == "2026-01-02 04:00:00"  # its due time kept
        assert ida is not None  # an owner with live turns and no due time gets one
    finally:
        await store.close()


async def test_the_migration_counts_a_sqlite_home_with_a_buffer(tmp_path: Path) -> None:
    await _migrated_home_counts(old_sqlite_home(tmp_path / "old.db", _BEFORE_COUNT, (_OLD_BUFFER, _OLD_DUE)))


async def test_the_migration_counts_a_postgres_home_with_a_buffer(
    postgres_cluster: throwaway_pg.Cluster,
) -> None:
    home = old_postgres_home(postgres_cluster, "tierclaw_count", _BEFORE_COUNT, (_OLD_BUFFER, _OLD_DUE))
    async with home as url:
        await _migrated_home_counts(url)

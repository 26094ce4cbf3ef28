"""The store contract, part 4: background work several replicas share — each owner's extraction due time
and claim, and the rows the embedding backfill claims (docs/scale-out.md, "Extraction") — run against
both stores (``store`` fixture)."""

from __future__ import annotations

import asyncio

from memory.store.open import open_store
from memory.store.protocol import MemoryStore

NOW = "2026-01-02 00:00:00.000000"
SOON = "2026-01-02 00:00:00.500000"
LATER = "2026-01-02 00:03:00.000000"
LEASE = "2026-01-02 00:02:00.000000"


async def _buffer(store: MemoryStore, owner: str, tokens: int) -> None:
    await store.buffer.append(owner, "telegram", "1", "1", "user", "text", tokens, "2026-01-02 00:00:00")


async def test_each_turn_pushes_the_due_time_and_the_budget_makes_it_now(store: MemoryStore) -> None:
    due = store.extraction_due
    await _buffer(store, "alice", 150)
    assert not await due.push("alice", 200, NOW, LATER)  # under the budget: the quiet gap
    assert (await due.get("alice")) == (LATER, None, None)
    await _buffer(store, "alice", 100)
    assert await due.push("alice", 200, SOON, LATER)  # 250 buffered: due now
    assert (await due.get("alice"))[0] == SOON
    assert not await due.ensure("alice", NOW)  # a start keeps the due time it finds
    assert await due.ensure("bob", NOW) and (await due.get("bob"))[0] == NOW


async def test_an_owner_is_claimed_by_one_replica_until_its_lease_runs_out(store: MemoryStore) -> None:
    due = store.extraction_due
    await due.ensure("alice", NOW)
    assert await due.claim_due("r1", SOON, LEASE) == ("alice", NOW, None)
    assert await due.claim_due("r2", SOON, LEASE) is None  # held
    assert await due.claim("alice", "r2", SOON, LEASE) is None  # a forced claim waits too
    assert await due.claim("alice", "r1", SOON, LEASE) == NOW  # the holder again
    assert await due.renew("alice", "r1", LATER) and not await due.renew("alice", "r2", LATER)
    after = "2026-01-02 00:03:00.000001"  # r1's lease ran out
    assert await due.claim_due("r2", after, "2026-01-02 00:05:00.000000") == ("alice", NOW, "r1")
    assert not await due.renew("alice", "r1", "2026-01-02 00:09:00.000000")  # r1 lost it
    assert await due.claim("bob", "r1", NOW, LEASE) == NOW  # a forced claim makes the row
    assert await due.count_due(SOON) == 2


async def test_release_clears_the_row_unless_a_turn_pushed_it_meanwhile(store: MemoryStore) -> None:
    due = store.extraction_due
    await due.ensure("alice", NOW)
    seen = await due.claim("alice", "r1", SOON, LEASE)
    await due.release("alice", "r2", seen, None)  # not r2's claim: nothing happens
    assert (await due.get("alice"))[1] == "r1"
    await due.release("alice", "r1", seen, None)
    assert await due.get("alice") is None
    seen = await due.claim("alice", "r1", SOON, LEASE)
    await _buffer(store, "alice", 10)
    await due.push("alice", 6000, SOON, LATER)  # a new turn while r1 extracts
    await due.release("alice", "r1", seen, None)
    assert await due.get("alice") == (LATER, None, None)  # its due time stays, unheld
    seen = await due.claim("alice", "r1", SOON, LEASE)
    await due.release("alice", "r1", seen, "2026-01-02 00:10:00.000000")  # a retry
    assert await due.get("alice") == ("2026-01-02 00:10:00.000000", None, None)


async def test_replicas_polling_at_once_take_different_owners(memory_db: str) -> None:
    stores = [await open_store(memory_db, warm_text=False) for _ in range(2)]
    try:
        for owner in ("alice", "bob"):
            await stores[0].extraction_due.ensure(owner, NOW)
        taken = await asyncio.gather(
            *(s.extraction_due.claim_due(f"r{i}", SOON, LEASE) for i, s in enumerate(stores))
        )
        assert sorted(t[0] for t in taken if t) == ["alice", "bob"]
    finally:
        for opened in stores:
            await opened.close()


async def test_embedding_rows_are_claimed_once_until_released_or_expired(store: MemoryStore) -> None:
    claims = store.embedding_claims
    assert await claims.claim("memories", [1, 2, 3], "r1", NOW, LEASE) == [1, 2, 3]
    assert await claims.claim("memories", [2, 3, 4], "r2", NOW, LEASE) == [4]
    assert await claims.claim("turns", [1], "r2", NOW, LEASE) == [1]  # another target
    await claims.release("memories", [1, 2], "r1")
    assert await claims.claim("memories", [1, 2, 3], "r2", SOON, LATER) == [1, 2]
    after = "2026-01-02 00:02:00.000001"  # r1's claim on 3 ran out
    assert await claims.claim("memories", [3], "r2", after, "2026-01-02 00:09:00.000000") == [3]
    assert await claims.count("memories") == 4 and await claims.count() == 5

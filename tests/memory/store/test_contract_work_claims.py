"""The store contract, part 4: background work several replicas share — each owner's extraction due time
and claim, and the rows the embedding backfill claims (docs/scale-out.md, "Extraction") — run against
both stores (``store`` fixture). Due times and leases are seconds from now on the store's own clock; a
claim's generation rises whenever it changes hands."""

from __future__ import annotations

import asyncio

from memory.store.open import open_store
from memory.store.protocol import MemoryStore

LEASE = 120.0
RAN_OUT = -1.0  # a lease that ended a second ago
GAP = 180.0


async def _buffer(store: MemoryStore, owner: str, tokens: int) -> None:
    await store.buffer.append(owner, "telegram", "1", "1", "user", "text", tokens, "2026-01-02 00:00:00")


async def _due(store: MemoryStore, owner: str) -> str:
    row = await store.extraction_due.get(owner)
    assert row is not None
    return row[0]


async def test_each_turn_pushes_the_due_time_and_the_budget_makes_it_now(store: MemoryStore) -> None:
    due = store.extraction_due
    await _buffer(store, "alice", 150)
    assert not await due.push("alice", 200, GAP)  # under the budget: the quiet gap
    quiet = await _due(store, "alice")
    assert (await due.get("alice"))[1:] == (None, None)  # type: ignore[index]
    assert await due.count_due() == 0  # due in three minutes
    await _buffer(store, "alice", 100)
    assert await due.push("alice", 200, GAP)  # 250 buffered: due now
    assert await _due(store, "alice") < quiet and await due.count_due() == 1
    assert not await due.ensure("alice", 0)  # a start keeps the due time it finds
    assert await due.ensure("bob", GAP) and await due.count_due() == 1


async def test_an_owner_is_claimed_by_one_replica_until_its_lease_runs_out(store: MemoryStore) -> None:
    due = store.extraction_due
    await due.ensure("alice", 0)
    seen = await _due(store, "alice")
    assert await due.claim_due("r1", LEASE) == ("alice", seen, None, 1)
    assert await due.claim_due("r2", LEASE) is None  # held
    assert await due.claim("alice", "r2", LEASE) is None  # a forced claim waits too
    assert await due.claim("alice", "r1", LEASE) == (seen, 1)  # the holder again: the same generation
    assert await due.renew("alice", "r1", 1, LEASE) and not await due.renew("alice", "r2", 1, LEASE)
    assert await due.renew("alice", "r1", 1, RAN_OUT)  # r1 stalls: its lease runs out
    assert await due.claim_due("r2", LEASE) == ("alice", seen, "r1", 2)
    assert not await due.renew("alice", "r1", 1, LEASE)  # r1 wakes: it lost it
    assert not await due.renew("alice", "r2", 1, LEASE)  # an old generation, whoever asks
    assert await due.claim("bob", "r1", LEASE) is not None  # a forced claim makes the row
    assert await due.count_due() == 2


async def test_release_clears_the_row_unless_a_turn_pushed_it_meanwhile(store: MemoryStore) -> None:
    due = store.extraction_due
    await due.ensure("alice", 0)
    claimed = await due.claim("alice", "r1", LEASE)
    assert claimed is not None
    seen, generation = claimed
    await due.release("alice", "r2", generation, seen, None)  # not r2's claim: nothing happens
    assert (await due.get("alice"))[1] == "r1"  # type: ignore[index]
    await due.release("alice", "r1", generation + 1, seen, None)  # not this generation's: nothing
    assert (await due.get("alice"))[1] == "r1"  # type: ignore[index]
    await due.release("alice", "r1", generation, seen, None)
    assert await due.get("alice") is None
    claimed = await due.claim("alice", "r1", LEASE)
    assert claimed is not None
    await _buffer(store, "alice", 10)
    await due.push("alice", 6000, GAP)  # a new turn while r1 extracts
    pushed = await _due(store, "alice")
    await due.release("alice", "r1", claimed[1], claimed[0], None)
    assert await due.get("alice") == (pushed, None, None)  # its due time stays, unheld
    claimed = await due.claim("alice", "r1", LEASE)
    assert claimed is not None
    await due.release("alice", "r1", claimed[1], claimed[0], 600)  # a retry in ten minutes
    retry = await due.get("alice")
    assert retry is not None and retry[0] > pushed and retry[1:] == (None, None)


async def test_replicas_polling_at_once_take_different_owners(memory_db: str) -> None:
    stores = [await open_store(memory_db, warm_text=False) for _ in range(2)]
    try:
        for owner in ("alice", "bob"):
            await stores[0].extraction_due.ensure(owner, 0)
        taken = await asyncio.gather(
            *(s.extraction_due.claim_due(f"r{i}", LEASE) for i, s in enumerate(stores))
        )
        assert sorted(t[0] for t in taken if t) == ["alice", "bob"]
    finally:
        for opened in stores:
            await opened.close()


async def test_embedding_rows_are_claimed_once_until_released_or_expired(store: MemoryStore) -> None:
    claims = store.embedding_claims
    assert await claims.claim("memories", [1, 2, 3], "r1", LEASE) == {1: 1, 2: 1, 3: 1}
    assert await claims.claim("memories", [2, 3, 4], "r2", LEASE) == {4: 1}
    assert await claims.claim("turns", [1], "r2", LEASE) == {1: 1}  # another target
    await claims.release("memories", [1, 2], "r1")
    assert await claims.claim("memories", [1, 2, 3], "r2", LEASE) == {1: 1, 2: 1}
    assert await claims.claim("memories", [3], "r1", RAN_OUT) == {3: 1}  # r1's claim on 3 runs out
    assert await claims.claim("memories", [3], "r2", LEASE) == {3: 2}  # taken over: a new generation
    assert await claims.held("memories", {3: 1}, "r1") == []  # r1 wakes: not its to store
    assert await claims.held("memories", {1: 1, 2: 1, 3: 2, 9: 1}, "r2") == [1, 2, 3]
    assert await claims.count("memories") == 4 and await claims.count() == 5

"""The store contract, part 3: what several gateways on one database coordinate with — job claims per
period with a lease, and the named singleton (docs/scale-out.md) — run against both stores (``store``
fixture). On SQLite the same calls hold, in one process."""

from __future__ import annotations

from memory.store.protocol import MemoryStore

PAST = "2026-01-01 00:00:00"
NOW = "2026-01-02 00:00:00"
LATER = "2026-01-02 00:10:00"


async def test_a_job_period_is_claimed_once_and_a_done_run_never_again(store: MemoryStore) -> None:
    claims = store.job_claims
    assert await claims.claim("daily", "2026-01-02 03:00:00", "r1", NOW, LATER)
    assert not await claims.claim("daily", "2026-01-02 03:00:00", "r2", NOW, LATER)  # live lease
    assert await claims.claim("daily", "2026-01-02 03:00:00", "r1", NOW, LATER)  # the holder again
    assert await claims.claim("weekly", "2026-01-02 03:00:00", "r2", NOW, LATER)  # another job
    assert await claims.renew("daily", "2026-01-02 03:00:00", "r1", "2026-01-02 00:20:00")
    assert not await claims.renew("daily", "2026-01-02 03:00:00", "r2", "2026-01-02 00:20:00")
    assert not await claims.finish("daily", "2026-01-02 03:00:00", "r2", NOW, "ok")  # not its claim
    assert await claims.finish("daily", "2026-01-02 03:00:00", "r1", NOW, "ok")
    # done: nobody takes it again, even long after its lease
    assert not await claims.claim("daily", "2026-01-02 03:00:00", "r2", "2027-01-01 00:00:00", "2027-01-02")
    assert await claims.of_job("daily") == [("2026-01-02 03:00:00", "r1", NOW, "ok")]


async def test_a_run_whose_lease_ran_out_is_stale_and_taken_over(store: MemoryStore) -> None:
    claims = store.job_claims
    assert await claims.claim("sweep", "2026-01-01 03:00:00", "dead", PAST, "2026-01-01 00:10:00")
    assert await claims.claim("sweep", "2026-01-02 03:00:00", "alive", NOW, LATER)
    assert await claims.stale(NOW) == [("sweep", "2026-01-01 03:00:00", "dead")]
    assert await claims.claim("sweep", "2026-01-01 03:00:00", "r2", NOW, LATER)  # taken over
    assert await claims.stale(NOW) == []
    assert not await claims.finish("sweep", "2026-01-01 03:00:00", "dead", NOW, "ok")  # it lost it
    assert await claims.finish("sweep", "2026-01-01 03:00:00", "r2", NOW, "ok")
    assert [row[1] for row in await claims.of_job("sweep")] == ["r2", "alive"]


async def test_a_singleton_is_held_until_released(store: MemoryStore) -> None:
    lock = store.singleton("telegram-poller")
    assert not await lock.held()
    assert await lock.acquire()
    assert await lock.acquire() and await lock.held()  # acquiring again keeps it
    await lock.release()
    assert not await lock.held()
    assert await lock.acquire()
    await lock.release()

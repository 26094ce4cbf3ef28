"""The store contract, part 3: what several gateways on one database coordinate with — job claims per
period with a lease, and the named singleton (docs/scale-out.md) — run against both stores (``store``
fixture). On SQLite the same calls hold, in one process."""

from __future__ import annotations

from memory.store.protocol import MemoryStore

LEASE = 600.0
RAN_OUT = -1.0  # a lease that ended a second ago: its replica died
DAILY = "2026-01-02 03:00:00"


async def test_a_job_period_is_claimed_once_and_a_done_run_never_again(store: MemoryStore) -> None:
    claims = store.job_claims
    assert await claims.claim("daily", DAILY, "r1", LEASE) == 1
    assert await claims.claim("daily", DAILY, "r2", LEASE) is None  # live lease
    assert await claims.claim("daily", DAILY, "r1", LEASE) == 1  # the holder again
    assert await claims.claim("weekly", DAILY, "r2", LEASE) == 1  # another job
    assert await claims.renew("daily", DAILY, "r1", 1, LEASE)
    assert not await claims.renew("daily", DAILY, "r2", 1, LEASE)
    assert not await claims.finish("daily", DAILY, "r2", 1, "ok")  # not its claim
    assert not await claims.finish("daily", DAILY, "r1", 2, "ok")  # not its generation
    assert await claims.finish("daily", DAILY, "r1", 1, "ok")
    assert await claims.claim("daily", DAILY, "r2", RAN_OUT) is None  # done: nobody takes it again
    [(period, holder, done_at, status)] = await claims.of_job("daily")
    assert (period, holder, status) == (DAILY, "r1", "ok") and done_at is not None


async def test_a_run_whose_lease_ran_out_is_stale_and_taken_over(store: MemoryStore) -> None:
    claims = store.job_claims
    assert await claims.claim("sweep", "2026-01-01 03:00:00", "dead", RAN_OUT) == 1
    assert await claims.claim("sweep", "2026-01-02 03:00:00", "alive", LEASE) == 1
    assert await claims.stale() == [("sweep", "2026-01-01 03:00:00", "dead")]
    assert await claims.claim("sweep", "2026-01-01 03:00:00", "r2", LEASE) == 2  # taken over
    assert await claims.stale() == []
    assert not await claims.renew("sweep", "2026-01-01 03:00:00", "dead", 1, LEASE)  # it lost it
    assert not await claims.finish("sweep", "2026-01-01 03:00:00", "dead", 1, "ok")
    assert await claims.finish("sweep", "2026-01-01 03:00:00", "r2", 2, "ok")
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

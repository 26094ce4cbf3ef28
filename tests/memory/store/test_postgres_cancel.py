"""A task cancelled as the PostgreSQL pool hands it a connection stops: the cancel is not lost.

Python 3.11's ``asyncio.wait_for`` returns the inner result when a cancel lands in the same loop turn as
the result, dropping the cancel. psycopg_pool waits for a free connection through it, so a statement
could run (and the loop around it carry on) after its task was told to stop; three gateway loops hung on
this before (hold keeper, reminder delivery loop, reminder send). ``PostgresDatabase`` now checks after
every acquire whether a cancel came while it waited, and raises it.

The window is made exact, not waited for: the cancel is sent from a done-callback of the inner wait
``wait_for`` runs, registered after ``wait_for``'s own, so it lands after the result and before the
waiting task runs again."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from memory.store.postgres.database import PostgresDatabase

pytestmark = pytest.mark.skipif(
    sys.version_info >= (3, 12), reason="3.12's wait_for runs no inner task and does not drop a cancel"
)

CEILING = 60.0


async def _until(predicate: Any) -> None:
    async with asyncio.timeout(CEILING):
        while not predicate():
            await asyncio.sleep(0.01)


def _pool_wait() -> asyncio.Task[Any]:
    """The inner task ``wait_for`` runs for the pool's waiting client (``Condition.wait``)."""
    inner = [t for t in asyncio.all_tasks() if t.get_coro().__qualname__ == "Condition.wait"]  # type: ignore[union-attr]
    assert len(inner) == 1, inner
    return inner[0]


async def _cancel_as_the_connection_comes(db: PostgresDatabase, work: Any) -> asyncio.Task[Any]:
    """Hold the only connection, start ``work`` (it waits for the connection), hand the connection over
    and cancel ``work`` in the turn its wait ends; returns the finished ``work`` task."""
    pool = db._pool
    started = asyncio.Event()
    release = asyncio.Event()

    async def holder() -> None:
        async with pool.connection():  # not db.transaction(): its lock would hold ``work`` up first
            started.set()
            await release.wait()

    holding = asyncio.create_task(holder())
    await asyncio.wait_for(started.wait(), CEILING)
    waiter = asyncio.create_task(work())
    await _until(lambda: pool.get_stats().get("requests_waiting", 0) == 1)
    _pool_wait().add_done_callback(lambda _inner: waiter.cancel())
    release.set()
    await asyncio.wait_for(holding, CEILING)
    await asyncio.wait({waiter}, timeout=CEILING)
    assert waiter.done()
    return waiter


async def test_a_statement_cancelled_as_the_pool_hands_it_a_connection_stops(postgres_url: str) -> None:
    db = await PostgresDatabase.open(postgres_url, pool_size=1)
    try:
        ran: list[int] = []

        async def work() -> None:
            await db.write("CREATE TEMP TABLE IF NOT EXISTS t (x int)")
            ran.append(1)

        waiter = await _cancel_as_the_connection_comes(db, work)
        assert waiter.cancelled()  # before the fix: the write ran and the task went on
        assert ran == []
        async with asyncio.timeout(CEILING):  # the connection went back to the pool
            assert await db.scalar("SELECT 7") == 7
    finally:
        await db.close()


async def test_a_transaction_cancelled_as_the_pool_hands_it_a_connection_stops(postgres_url: str) -> None:
    db = await PostgresDatabase.open(postgres_url, pool_size=1)
    try:
        ran: list[int] = []

        async def work() -> None:
            async with db.transaction():
                ran.append(1)

        waiter = await _cancel_as_the_connection_comes(db, work)
        assert waiter.cancelled()
        assert ran == []
        assert not db.in_transaction()
        async with asyncio.timeout(CEILING):
            async with db.transaction():
                assert await db.scalar("SELECT 7") == 7
    finally:
        await db.close()


async def test_cleanup_after_a_cancel_still_reaches_the_database(postgres_url: str) -> None:
    """A cancel the task already knows of (a ``finally`` writing after it) is not raised again: only one
    that came while the connection was being waited for is."""
    db = await PostgresDatabase.open(postgres_url, pool_size=1)
    try:
        cleaned: list[int] = []
        entered = asyncio.Event()

        async def work() -> None:
            try:
                entered.set()
                await asyncio.Event().wait()
            finally:
                cleaned.append(await db.scalar("SELECT 3"))

        task = asyncio.create_task(work())
        await asyncio.wait_for(entered.wait(), CEILING)
        task.cancel()
        await asyncio.wait({task}, timeout=CEILING)
        assert task.cancelled()
        assert cleaned == [3]
    finally:
        await db.close()

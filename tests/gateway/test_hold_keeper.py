"""The hold keeper ends when it is cancelled (gateway/hold_keeper.py), even when a library it was awaiting
swallowed the cancel: Python 3.11's ``asyncio.wait_for`` — which psycopg_pool's wait for a free
connection uses — returns a result that came with the cancel instead of raising it. The keeper runs
forever otherwise, and ``ProcessLoop.stop``, which awaits it, hung (seen under two suites at once, in
the teardown of a test_fencing test on PostgreSQL)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from gateway.hold_keeper import LostChats, keep_holds
from gateway.inbox import DurableInbox
from memory.store.open import open_store
from tests.support.waiting import until


async def test_the_keeper_ends_when_a_cancel_was_swallowed_under_it(tmp_path: Path) -> None:
    store = await open_store(str(tmp_path / "memory.db"), warm_text=False)
    sweeps = 0

    async def sweep() -> int:
        nonlocal sweeps
        sweeps += 1
        if sweeps == 1:
            # the keeper is cancelled here, and the library it was in returns all the same (3.11's
            # wait_for when its result was ready)
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.Event().wait()
        return 0

    keeper = asyncio.create_task(keep_holds(DurableInbox(store), {}, sweep, LostChats(), lambda: 0.01))
    try:
        await until(lambda: sweeps == 1, what="the first sweep")
        keeper.cancel()
        await asyncio.wait({keeper}, timeout=30)  # a ceiling: a keeper that runs on fails the test
        assert keeper.cancelled(), "the keeper ran on after its cancel was swallowed"
        assert sweeps == 1  # no round after the cancel
    finally:
        if not keeper.done():
            keeper.cancel()
        await store.close()

"""Telegram polling with several replicas (docs/scale-out.md, "Channels"): exactly one channel polls,
the one whose replica holds the database's poller lock (``store.singleton``, an advisory lock on its own
PostgreSQL connection); when that connection dies, as with a killed replica, the other channel takes
over. Two real channels against the local Bot API server, two stores on one PostgreSQL database."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest

from channels.telegram.channel import TelegramChannel
from localservers.telegram_server import TelegramStub
from memory.store.open import open_store
from memory.store.protocol import MemoryStore
from tests.support.telegram_channel import Inbox, quick, settings
from tests.support.waiting import until

STANDING_BY = "another replica polls for this bot; standing by"  # channels/telegram/poll_turn.py
POLLS_NOW = "this replica polls now"  # a replica that stood by took the lock


class Replica:
    def __init__(self, store: MemoryStore, tg: TelegramStub) -> None:
        self.store = store
        self.lock = store.singleton("poller:telegram")
        self.channel = quick(TelegramChannel(settings(tg)))
        self.channel.standby_seconds = 0.2
        self.channel.may_poll = self.may_poll  # the lock's acquire, as Runtime._one_poller wires it
        self.inbox = Inbox()
        self.running = asyncio.Event()  # cleared: the replica is stopped (SIGSTOP) before its next poll
        self.running.set()
        self.parked = asyncio.Event()  # set once it is stopped there

    async def may_poll(self) -> bool:
        if not self.running.is_set():
            self.parked.set()
            await self.running.wait()
        return await self.lock.acquire()


@pytest.fixture
async def replicas(postgres_url: str, tg: TelegramStub) -> AsyncIterator[tuple[Replica, Replica]]:
    pair = [Replica(await open_store(postgres_url, warm_text=False), tg) for _ in range(2)]
    try:
        yield pair[0], pair[1]
    finally:
        for replica in pair:
            await replica.channel.stop()
            await replica.lock.release()
            await replica.store.close()


async def _until(condition, what: str) -> None:  # type: ignore[no-untyped-def]
    # a time ceiling (tests/support/waiting.py), not 1000 polls: each poll is a statement, slow when starved
    await until(condition, what=what, every=0.02)


async def test_one_replica_polls_and_another_takes_over_when_its_connection_dies(
    replicas: tuple[Replica, Replica], tg: TelegramStub, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="tierclaw.channels")

    async def both_stood_by() -> bool:  # the second at its start, the first once it lost the lock
        return sum(STANDING_BY in r.getMessage() for r in caplog.records) >= 2

    first, second = replicas
    await first.channel.start(first.inbox)
    await _until(first.lock.held, "the first replica holds the poller lock")
    await second.channel.start(second.inbox)

    for n in range(3):
        tg.push(tg.message(f"hello {n}"))
    await first.inbox.wait(3)
    await _until(lambda: _true(not tg.pending_updates()), "the updates confirmed")
    # Checked on a session of its own: a replica's lock is its channel's, and a call on it beside the
    # channel's own (every 0.2 s) could close the connection the other is using (it did, beside a suite).
    assert await _taken(second.store) and second.inbox == []

    # The holder stops before its next poll (SIGSTOP) and its database session ends, as when its replica
    # is killed: PostgreSQL frees the lock. Ended by the server, not closed here: closing it under the
    # channel's own check of it (``held``, a statement on that connection) could leave that check
    # waiting for ever (1 run in 5 at load 8). Stopped first, or the first replica, still running, could
    # take the free lock again on a new connection before the second asked.
    first.running.clear()
    await asyncio.wait_for(first.parked.wait(), 60)  # its long poll in flight ended: it asks no more
    connection = first.lock._conn  # the dedicated connection of AdvisorySingleton
    assert connection is not None
    ended = await second.store.db.read("SELECT pg_terminate_backend(?)", (connection.info.backend_pid,))
    assert ended == [(True,)]
    await _until(lambda: _true(POLLS_NOW in caplog.text), "the second replica takes the poller lock")
    first.running.set()  # it goes on, as a replica that lost its connection but lives: the lock is taken
    assert await _taken(second.store)
    # the first replica's long poll in flight ends, and it asks again: it stands by
    await _until(both_stood_by, "the first replica stands by")

    polled_before = len(first.inbox)
    for n in range(3):
        tg.push(tg.message(f"after {n}"))
    got = await second.inbox.wait(3)
    assert got.text == "after 2"
    assert [m.text for m in second.inbox] == ["after 0", "after 1", "after 2"]
    assert len(first.inbox) == polled_before == 3


async def _true(value: bool) -> bool:
    return value


async def _taken(store: MemoryStore) -> bool:
    """Whether some session holds the poller lock, asked on a session of this check's own."""
    probe = store.singleton("poller:telegram")
    try:
        return not await probe.acquire()
    finally:
        await probe.release()

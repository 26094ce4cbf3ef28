"""Several gateways on one PostgreSQL database deliver each reminder once (README "Reminders"): two
delivery loops, each on its own engine, share due reminders; when one dies mid-send (its sends never
finish, its claims are not handed over) the other sends those once its lease runs out; one that stalled
past its lease sends nothing when it wakes (the claim's generation: docs/scale-out.md, "Fencing")."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from channels.base import Deliver, OutboundMessage
from gateway.reminders.book import ReminderBook
from gateway.reminders.delivery import DeliverySettings, ReminderDelivery
from memory.clock import from_db, to_db_fine, utcnow
from memory.engine import MemoryEngine
from memory.store.reminders import ReminderRow
from tests.gateway.reminders.support import add, due_row, until_status


class Recording:
    """A channel (our protocol) named like Telegram that keeps what it sent; ``hang``: sends never end."""

    name = "telegram"

    def __init__(self, hang: bool = False) -> None:
        self.sent: list[str] = []
        self.tries = 0  # sends begun, finished or not
        self.hang = hang

    async def start(self, deliver: Deliver) -> None:
        pass

    async def send(self, message: OutboundMessage) -> None:
        self.tries += 1
        if self.hang:
            await asyncio.Event().wait()
        self.sent.append(message.text)

    async def stop(self) -> None:
        pass


async def until(predicate: object, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


def loop(engine: MemoryEngine, channel: Recording, name: str, lease: float = 60.0) -> ReminderDelivery:
    """A delivery loop; its claims' ``lease`` long enough that none of a live loop runs out under load,
    unless a test waits one out (a dead loop's)."""
    book = ReminderBook(engine.store, default_zone=ZoneInfo("UTC"))
    return ReminderDelivery(
        engine, book, {"telegram": channel}, name, DeliverySettings(lease=lease, poll_every=0.2)
    )


async def test_two_gateways_send_each_reminder_once(postgres_url: str) -> None:
    engines = [await MemoryEngine.open(postgres_url) for _ in range(2)]
    channels = [Recording(), Recording()]
    loops = [loop(e, c, f"r{i}") for i, (e, c) in enumerate(zip(engines, channels, strict=True))]
    try:
        start = utcnow()
        for n in range(120):
            due = start + timedelta(seconds=0.5 + n / 60)
            await add(engines[0], due_row("telegram:42", "telegram", "42", f"note {n}", due))
        for delivery in loops:
            delivery.start()
        await until(lambda: len(channels[0].sent) + len(channels[1].sent) >= 120)
        count = engines[0].store.reminders.count
        deadline = time.monotonic() + 30
        while await count(status="delivered") < 120:  # every one marked: no claim left to run out
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        counts = Counter(channels[0].sent + channels[1].sent)
        assert len(counts) == 120 and set(counts.values()) == {1}
    finally:
        for delivery in loops:
            await delivery.stop()
        for engine in engines:
            await engine.close()


async def test_a_dead_gateways_reminders_are_sent_by_the_other(postgres_url: str) -> None:
    engines = [await MemoryEngine.open(postgres_url) for _ in range(2)]
    dying, living = Recording(hang=True), Recording()
    first, second = loop(engines[0], dying, "r0", lease=3.0), loop(engines[1], living, "r1")
    try:
        ids = [
            await add(engines[0], due_row("telegram:42", "telegram", "42", f"note {n}", utcnow()))
            for n in range(5)
        ]
        first.start()
        await until(lambda: len(first._sending) == 5)  # r0 claimed them all and is stuck sending
        # killed: its claims stay until their lease runs out (a ceiling: this hung once, see below)
        await asyncio.wait_for(first.stop(hand_over=False), 60)
        second.start()
        await until(lambda: len(living.sent) == 5)
        assert sorted(living.sent) == [f"⏰ Reminder: note {n}" for n in range(5)] and dying.sent == []
        for rid in ids:
            await until_status(engines[1], "telegram:42", rid, "delivered")
    finally:
        await second.stop()
        for engine in engines:
            await engine.close()


async def test_a_gateway_that_stalled_past_its_lease_sends_nothing_when_it_wakes(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    # r0 claimed a reminder and froze before its send (its lease ran out: -1 s); r1 took it over and
    # sent it. r0's send then resumes: the fence finds r0's generation gone, so nothing goes out twice.
    engines = [await MemoryEngine.open(postgres_url) for _ in range(2)]
    stalled, living = Recording(), Recording()
    first, second = loop(engines[0], stalled, "r0"), loop(engines[1], living, "r1")
    try:
        rid = await add(engines[0], due_row("telegram:42", "telegram", "42", "stretch", utcnow()))
        now = to_db_fine(utcnow())
        (row,), db_now = await engines[0].store.reminders.claim_due("r0", ["telegram"], now, now, -1.0)
        second.start()
        await until_status(engines[1], "telegram:42", rid, "delivered")
        with caplog.at_level(logging.WARNING, logger="tierclaw.gateway"):
            await first._deliver(row, from_db(db_now))  # r0 wakes where it stopped
        assert living.sent == ["⏰ Reminder: stretch"] and stalled.sent == []
        assert "taken over by another gateway while this one stalled" in caplog.text
        done = await engines[0].store.reminders.get("telegram:42", rid)
        assert done is not None and (done.status, done.sent_count) == ("delivered", 1)
    finally:
        await second.stop()
        for engine in engines:
            await engine.close()


class SwallowingDelivery(ReminderDelivery):
    """A delivery loop whose round, once, swallows the cancel it gets (what Python 3.11's wait_for, in
    psycopg_pool's wait for a free connection, does when the connection comes with the cancel)."""

    rounds = 0

    async def _round(self) -> None:
        self.rounds += 1
        if self.rounds == 1:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.Event().wait()
            return
        await super()._round()


async def test_stop_ends_the_loop_even_when_a_cancel_was_swallowed_under_it(tmp_path: Path) -> None:
    # Seen with two suites at once: test_a_dead_gateways_reminders_are_sent_by_the_other hung in
    # ``first.stop``, the loop's task 'cancelling' and back in its next round.
    engine = await MemoryEngine.open(tmp_path / "memory.db")
    book = ReminderBook(engine.store, default_zone=ZoneInfo("UTC"))
    settings = DeliverySettings(lease=60.0, poll_every=0.2)
    delivery = SwallowingDelivery(engine, book, {"telegram": Recording()}, "r0", settings)
    try:
        delivery.start()
        await until(lambda: delivery.rounds == 1)
        await asyncio.wait_for(delivery.stop(hand_over=False), 30)  # a ceiling: hung before
        assert delivery.rounds == 1  # no round after the cancel
    finally:
        await engine.close()


class SwallowingFence(ReminderDelivery):
    """A delivery loop whose fence (the claim extended right before the send) swallows the cancel it gets,
    as the round above did: the same wait_for, in the same pool."""

    fenced = 0

    async def _extend(self, row: ReminderRow) -> bool:
        self.fenced += 1
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.Event().wait()
        return await super()._extend(row)


async def test_stop_ends_a_send_whose_fence_swallowed_the_cancel(tmp_path: Path) -> None:
    # Seen in round 2 of two suites at once: test_a_dead_gateways_reminders_are_sent_by_the_other hung in
    # ``first.stop`` in both copies, a send task 'cancelling' and inside the channel's never-ending send.
    engine = await MemoryEngine.open(tmp_path / "memory.db")
    book = ReminderBook(engine.store, default_zone=ZoneInfo("UTC"))
    channel = Recording(hang=True)
    delivery = SwallowingFence(
        engine, book, {"telegram": channel}, "r0", DeliverySettings(lease=60.0, poll_every=0.2)
    )
    try:
        await add(engine, due_row("telegram:42", "telegram", "42", "stretch", utcnow()))
        delivery.start()
        await until(lambda: delivery.fenced == 1)
        # stop() ends even then (its ceiling's cancel reaches the send), but a stopping gateway must not
        # begin a send: a real platform would take it, and nothing would mark it.
        await asyncio.wait_for(delivery.stop(hand_over=False), 60)
        assert channel.tries == 0
    finally:
        await engine.close()

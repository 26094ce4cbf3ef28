"""Two process loops on one database as two replicas (gateway/loop.py, gateway/chat_claims.py,
docs/scale-out.md "The message path"): a chat is answered by the one replica holding it, in order,
whichever replica took each message in; a replica killed mid-answer loses its chats to the other after
its lease, and each message is answered once. Each replica has its own store (its own connections) on
the same database: PostgreSQL, and SQLite for the same code path in one process (``memory_db``)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import TypeVar

import pytest

from channels.base import InboundMessage, OutboundMessage
from gateway.inbox import DurableInbox
from gateway.loop import ProcessLoop
from memory.store.open import open_store
from memory.store.protocol import MemoryStore
from tests.support.waiting import until

# Long enough that no live replica's hold runs out while a test runs, however loaded the machine; a dead
# replica's leases are ended explicitly, on the database's clock (``_lease_runs_out``).
LEASE = timedelta(seconds=60)
Handler = Callable[[InboundMessage], Awaitable[str | None]]


class Recorder:
    """The "test" channel of one replica; every replica appends to one shared list, in send order."""

    name = "test"

    def __init__(self, replica: str, sent: list[tuple[str, str, str]]) -> None:
        self.replica = replica
        self.sent = sent

    async def start(self, deliver) -> None:  # pragma: no cover - not used
        pass

    async def send(self, message: OutboundMessage) -> None:
        self.sent.append((self.replica, message.chat_id, message.text))

    async def stop(self) -> None:
        pass


class Observed:
    """A ``LoopObserver`` (what gateway/metrics.py counts) that writes down what it is told."""

    def __init__(self) -> None:
        self.taken_in: list[str] = []
        self.answered: list[tuple[str, float]] = []

    def received(self, message: InboundMessage) -> None:
        self.taken_in.append(message.text)

    def finished(
        self, message: InboundMessage, reply: str | None, send_error: str | None, seconds: float
    ) -> None:
        self.answered.append((message.text, seconds))


class Replica:
    """One replica: its own store on the shared database, its inbox (its replica id) and loop."""

    def __init__(self, store: MemoryStore, name: str, handler: Handler, sent: list[tuple[str, str, str]]):
        self.store = store
        self.inbox = DurableInbox(store, name, lease=LEASE)
        self.loop = ProcessLoop(handler, inbox=self.inbox, sweep_every=0.1)
        self.loop.add_channel(Recorder(name, sent))
        self.takeovers: list[tuple[tuple[str, str], str]] = []
        self.loop.on_takeover = lambda chat, holder: self.takeovers.append((chat, holder))
        self.observed = Observed()
        self.loop.observer = self.observed


Open = Callable[[str, Handler], Awaitable[Replica]]


@pytest.fixture
async def replicas(memory_db: str) -> AsyncIterator[tuple[Open, list[tuple[str, str, str]]]]:
    """Open replicas on one database (``memory_db``: SQLite and PostgreSQL); all stopped afterwards."""
    sent: list[tuple[str, str, str]] = []
    opened: list[Replica] = []

    async def open_one(name: str, handler: Handler) -> Replica:
        replica = Replica(await open_store(memory_db, warm_text=False), name, handler, sent)
        replica.loop.start()
        opened.append(replica)
        return replica

    try:
        yield open_one, sent
    finally:
        for replica in opened:
            await asyncio.wait_for(replica.loop.stop(), 60)
            await replica.store.close()


def _counted_sweeps(loop: ProcessLoop) -> list[int]:
    """The chats each sweep of ``loop`` took, one entry per finished sweep, from now on."""
    sweeps: list[int] = []
    sweep = loop.take_waiting

    async def counted(**kwargs: bool) -> int:
        taken = await sweep(**kwargs)
        sweeps.append(taken)
        return taken

    loop.take_waiting = counted  # type: ignore[method-assign]
    return sweeps


def _msg(chat: str, text: str) -> InboundMessage:
    return InboundMessage("test", chat, chat, text, delivery_id=text)


async def _answered(replica: Replica, timeout: float = 30) -> None:
    """Wait until nothing stored is unanswered (whichever replica answers it)."""
    async with asyncio.timeout(timeout):
        while await replica.inbox.unanswered():
            await asyncio.sleep(0.05)


async def _lease_runs_out(replica: Replica, chat: str) -> None:
    """The dead replica renews nothing any more: its hold's lease ends now (the database's clock)."""
    assert await replica.store.chat_holds.take("test", chat, replica.inbox.replica, -1.0) is not None


async def test_a_message_taken_in_by_another_replica_is_answered_by_the_holder_in_order(replicas) -> None:
    open_replica, sent = replicas
    go_on = asyncio.Event()

    async def slow(message: InboundMessage) -> str:
        await go_on.wait()
        return f"a:{message.text}"

    async def quick(message: InboundMessage) -> str:
        return f"b:{message.text}"

    a = await open_replica("a", slow)
    b = await open_replica("b", quick)
    await a.loop.deliver(_msg("c1", "one"))  # a holds c1 and is answering "one"
    await b.loop.deliver(_msg("c1", "two"))  # b stores it, cannot hold c1: leaves it to a
    await asyncio.wait_for(b.loop.drain(), 30)
    assert sent == [] and b.loop.pending == 0
    assert [row[2] for row in await a.store.chat_holds.all()] == ["a"]
    go_on.set()
    await asyncio.wait_for(a.loop.drain(), 30)
    assert sent == [("a", "c1", "a:one"), ("a", "c1", "a:two")]
    assert await a.store.chat_holds.all() == []  # let go once nothing was left
    assert a.takeovers == b.takeovers == []
    # each replica counts what it took in; a counts both answers, timed from when "two" was stored
    assert (a.observed.taken_in, b.observed.taken_in) == (["one"], ["two"])
    assert [text for text, _ in a.observed.answered] == ["one", "two"] and b.observed.answered == []
    assert all(seconds >= 0 for _, seconds in a.observed.answered)


async def test_two_replicas_fed_the_messages_of_chats_alternately_answer_all_in_order_once(replicas) -> None:
    open_replica, sent = replicas
    rng = random.Random(29)

    def handler_of(name: str) -> Handler:
        async def handler(message: InboundMessage) -> str:
            await asyncio.sleep(rng.uniform(0, 0.03))
            return f"re:{message.text}"

        return handler

    a = await open_replica("a", handler_of("a"))
    b = await open_replica("b", handler_of("b"))
    chats, per_chat = 3, 12

    async def one_chat(chat: str) -> None:
        for i in range(per_chat):  # each chat in order, alternately to a and b (round robin)
            await (a if i % 2 == 0 else b).loop.deliver(_msg(chat, f"{chat}-{i:02d}"))
            await asyncio.sleep(rng.uniform(0, 0.02))

    await asyncio.gather(*(one_chat(f"c{n}") for n in range(chats)))
    await _answered(a)
    await asyncio.wait_for(asyncio.gather(a.loop.drain(), b.loop.drain()), 30)
    texts = [text for _, _, text in sent]
    assert len(texts) == len(set(texts)) == chats * per_chat  # each answered once
    for n in range(chats):
        in_chat = [text for _, chat, text in sent if chat == f"c{n}"]
        assert in_chat == [f"re:c{n}-{i:02d}" for i in range(per_chat)]  # in order
    assert {replica for replica, _, _ in sent} <= {"a", "b"}
    assert await a.store.chat_holds.all() == []


async def test_a_killed_replicas_chat_is_answered_by_the_other_after_its_lease(replicas) -> None:
    open_replica, sent = replicas
    started = asyncio.Event()

    async def hangs(message: InboundMessage) -> str:
        started.set()
        await asyncio.Event().wait()  # killed before it answers
        return "never"

    async def answers(message: InboundMessage) -> str:
        return f"b:{message.text}"

    a = await open_replica("a", hangs)
    b = await open_replica("b", answers)
    await a.loop.deliver(_msg("c1", "one"))
    await asyncio.wait_for(started.wait(), 30)
    await b.loop.deliver(_msg("c1", "two"))  # a holds c1: b leaves it
    await a.loop.deliver(_msg("c2", "three"))
    # SIGKILL: its holds stay until their lease runs out
    await asyncio.wait_for(a.loop.stop(hand_over=False), 60)
    assert sent == []
    # b's sweeps leave the chats while a's leases are live: three of them, and nothing was taken
    sweeps = _counted_sweeps(b.loop)
    await until(lambda: len(sweeps) >= 3, what="three sweeps of b")
    assert sent == [] and b.takeovers == [] and await b.inbox.unanswered()

    for chat in ("c1", "c2"):
        await _lease_runs_out(a, chat)
    await _answered(b)  # b's sweep takes c1 and c2 once a's lease ran out
    await asyncio.wait_for(b.loop.drain(), 30)
    assert sorted(sent) == [("b", "c1", "b:one"), ("b", "c1", "b:two"), ("b", "c2", "b:three")]
    assert [text for _, chat, text in sent if chat == "c1"] == ["b:one", "b:two"]
    assert sorted(b.takeovers) == [(("test", "c1"), "a"), (("test", "c2"), "a")]
    assert await b.store.chat_holds.all() == []


async def test_a_replica_that_stops_hands_its_chats_over_at_once(replicas) -> None:
    open_replica, sent = replicas
    started = asyncio.Event()

    async def hangs(message: InboundMessage) -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    async def answers(message: InboundMessage) -> str:
        return f"b:{message.text}"

    a = await open_replica("a", hangs)
    a.inbox.lease = timedelta(minutes=10)  # were the hold kept, b would wait ten minutes
    b = await open_replica("b", answers)
    await a.loop.deliver(_msg("c1", "one"))
    await asyncio.wait_for(started.wait(), 30)
    # a graceful stop (its drain ran out of time): the holds are handed over
    await asyncio.wait_for(a.loop.stop(), 60)
    await _answered(b)
    assert sent == [("b", "c1", "b:one")]
    assert b.takeovers == []  # handed over, not taken from a dead replica


class RacingInbox(DurableInbox):
    """A real inbox whose release is followed, before the worker hears of it, by a new message of the
    chat taken in: the interleaving where the release's statement ran just before the message was stored."""

    loop: ProcessLoop
    late: InboundMessage | None = None

    async def release(self, chat: tuple[str, str]) -> bool:
        released = await super().release(chat)
        await self._late_arrives(released)
        return released

    async def answered_then_next(self, claim, send_error=None, exchange=None):
        # The answered-mark lets the chat go in the same statement when nothing is left (issue 38, item 5).
        marked, following, released, due = await super().answered_then_next(claim, send_error, exchange)
        if released:
            await self._late_arrives(released)
        return marked, following, released, due

    async def _late_arrives(self, released: bool) -> None:
        late, self.late = self.late, None
        if late is not None:
            assert released  # nothing was waiting when the hold was dropped
            await self.loop.deliver(late)


Racing = TypeVar("Racing", bound=RacingInbox)


@asynccontextmanager
async def _one_racing(
    memory_db: str, inbox_kind: type[Racing]
) -> AsyncIterator[tuple[MemoryStore, Racing, list[tuple[str, str, str]]]]:
    """One replica whose inbox is ``inbox_kind`` (chat c1's message "two" taken in as the chat is let go
    after "one"), with no sweep to come to the rescue: "one" delivered and the loop drained, then (store,
    inbox, what was sent); the loop stopped and the store closed after."""
    store = await open_store(memory_db, warm_text=False)
    sent: list[tuple[str, str, str]] = []

    async def answers(message: InboundMessage) -> str:
        return f"re:{message.text}"

    inbox = inbox_kind(store, "a", lease=LEASE)
    loop = ProcessLoop(answers, inbox=inbox, sweep_every=3600)
    loop.add_channel(Recorder("a", sent))
    inbox.loop = loop
    inbox.late = _msg("c1", "two")
    loop.start()
    try:
        await loop.deliver(_msg("c1", "one"))
        await asyncio.wait_for(loop.drain(), 30)
        yield store, inbox, sent
    finally:
        await asyncio.wait_for(loop.stop(), 60)
        await store.close()


async def test_a_message_taken_in_while_its_chat_is_let_go_is_still_answered(memory_db: str) -> None:
    async with _one_racing(memory_db, RacingInbox) as (_, _, sent):
        pass
    assert sent == [("a", "c1", "re:one"), ("a", "c1", "re:two")]


class CountingInbox(RacingInbox):
    """``RacingInbox`` counting the worker's own holds and claims (each a commit of its own)."""

    holds_taken = 0
    claims_asked = 0

    async def hold(self, chat: tuple[str, str], *, force: bool = False) -> bool:
        self.holds_taken += 1
        return await super().hold(chat, force=force)

    async def next_message(self, chat: tuple[str, str]):
        self.claims_asked += 1
        return await super().next_message(chat)


async def test_a_message_taken_in_as_its_chat_is_let_go_costs_no_hold_or_claim_of_its_own(
    memory_db: str,
) -> None:
    """The interleaving above: the message's intake, made while the chat's worker is still here, claims
    the message (the chat was let go, so it is idle) and hands the claim to that worker — no hold and no
    claim of the worker's own after it (issue 38: two commits a message, intake and answered step)."""
    async with _one_racing(memory_db, CountingInbox) as (store, inbox, sent):
        assert await store.chat_holds.holder("test", "c1") is None  # let go after "two"
    assert sent == [("a", "c1", "re:one"), ("a", "c1", "re:two")]
    assert inbox.late is None  # "two" came as the chat was let go
    assert (inbox.holds_taken, inbox.claims_asked) == (0, 0)
